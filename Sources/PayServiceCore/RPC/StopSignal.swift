import Foundation

// Shared with the signal handler, which can only touch plain globals: `stopPipeWrite` is written
// once by `install` before the handlers are installed, `stopFlag` only by the handler
// (sig_atomic_t, the type C guarantees a handler may write) and read by the server thread.
nonisolated(unsafe) private var stopFlag: sig_atomic_t = 0
nonisolated(unsafe) private var stopPipeWrite: Int32 = -1
nonisolated(unsafe) private var reloadFlag: sig_atomic_t = 0

/// SIGTERM and SIGINT handling: the handler only sets a flag and writes a byte to a self-pipe
/// (both async-signal-safe). The server polls the pipe while waiting for input and checks the flag
/// between requests, so the request in flight always finishes and is answered. SIGHUP asks for a
/// config reload the same way (its own flag, the same pipe): the server reloads between requests.
public enum StopSignal {
  /// Installs the handlers (without SA_RESTART), unblocks the signals, and returns the pipe's read end.
  public static func install() -> Int32 {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return -1 }
    stopPipeWrite = fds[1]
    handle([SIGTERM, SIGINT]) { _ in
      stopFlag = 1
      var byte: UInt8 = 1
      _ = write(stopPipeWrite, &byte, 1)
    }
    handle([SIGHUP]) { _ in
      reloadFlag = 1
      var byte: UInt8 = 2
      _ = write(stopPipeWrite, &byte, 1)
    }
    // A parent may spawn us with these signals blocked (a mask inherited from one of its threads);
    // unblock them, or SIGTERM would never reach the handler.
    var unblock = sigset_t()
    sigemptyset(&unblock)
    for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, signal) }
    pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    return fds[0]
  }

  /// Makes `handler` the handler of `signals`, with no flags (no SA_RESTART) and nothing masked.
  private static func handle(_ signals: [Int32], _ handler: @escaping @convention(c) (Int32) -> Void) {
    var action = sigaction()
    #if os(Linux)
      action.__sigaction_handler.sa_handler = handler
    #else
      action.__sigaction_u.__sa_handler = handler
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    for signal in signals { sigaction(signal, &action, nil) }
  }

  public static var requested: Bool { stopFlag != 0 }

  /// Whether SIGHUP came and was not taken yet (`takeReloadRequest`).
  public static var reloadRequested: Bool { reloadFlag != 0 }

  /// Whether SIGHUP came since the last call (which clears it): a reload is wanted.
  public static func takeReloadRequest() -> Bool {
    guard reloadFlag != 0 else { return false }
    reloadFlag = 0
    return true
  }
}
