import Foundation

/// Writes all of `bytes` to `descriptor`, going on after short writes and interrupted calls; false
/// when the descriptor fails (a closed pipe), and then an unknown part was written.
@discardableResult
public func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
  guard var next = bytes.baseAddress else { return true }
  var left = bytes.count
  while left > 0 {
    let written = write(descriptor, next, left)
    if written < 0 {
      if errno == EINTR { continue }
      return false
    }
    next += written
    left -= written
  }
  return true
}
