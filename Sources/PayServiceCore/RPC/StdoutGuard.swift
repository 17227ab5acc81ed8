import Foundation

/// Keeps stdout for responses only, the way sourcekit-lsp does: the real stdout descriptor is
/// duplicated for the response writer and fd 1 is pointed at stderr, so a stray `print` anywhere
/// lands in the log instead of corrupting the response stream.
public enum StdoutGuard {
  /// Returns the descriptor responses must be written to.
  public static func install() -> Int32 {
    fflush(nil)
    let responses = dup(STDOUT_FILENO)
    dup2(STDERR_FILENO, STDOUT_FILENO)
    _ = fcntl(responses, F_SETFD, FD_CLOEXEC)
    return responses
  }
}
