import Foundation

// Shared with the signal handler, which can only touch plain globals: `stopPipeWrite` is written
// once by `install` before the handlers are installed, `stopFlag` only by the handler
// (sig_atomic_t, the type C guarantees a handler may write) and read by the server thread.
nonisolated(unsafe) private var stopFlag: sig_atomic_t = 0
nonisolated(unsafe) private var stopPipeWrite: Int32 = -1

/// SIGTERM and SIGINT handling: the handler only sets a flag and writes a byte to a self-pipe
/// (both async-signal-safe). The server polls the pipe while waiting for input and checks the flag
/// between requests, so the request in flight always finishes and is answered.
public enum StopSignal {
  /// Installs the handlers (without SA_RESTART), unblocks both signals, and returns the pipe's read end.
  public static func install() -> Int32 {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return -1 }
    stopPipeWrite = fds[1]
    var action = sigaction()
    #if os(Linux)
      action.__sigaction_handler.sa_handler = { _ in
        stopFlag = 1
        var byte: UInt8 = 1
        _ = write(stopPipeWrite, &byte, 1)
      }
    #else
      action.__sigaction_u.__sa_handler = { _ in
        stopFlag = 1
        var byte: UInt8 = 1
        _ = write(stopPipeWrite, &byte, 1)
      }
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGTERM, &action, nil)
    sigaction(SIGINT, &action, nil)
    // A parent may spawn us with these signals blocked (a mask inherited from one of its threads);
    // unblock them, or SIGTERM would never reach the handler.
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, SIGTERM)
    sigaddset(&unblock, SIGINT)
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    return fds[0]
  }

  public static var requested: Bool { stopFlag != 0 }
}
