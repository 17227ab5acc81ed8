import Foundation
import Testing

@testable import PayServiceCore

/// A path's directory, for the store's opening lock and the config's relative files.
@Suite("Path text")
struct PathTextTests {
  @Test("the directory of a path is what Foundation's deletingLastPathComponent gives, without its trap on one character")
  func directory() {
    let cases = [
      ("s", ""), ("store.sqlite", ""), ("/s", "/"), ("/var/lib/payservice/store.sqlite", "/var/lib/payservice"),
      ("certs/a.pem", "certs"), ("a//b", "a"), ("dir/", ""), ("/dir/sub/", "/dir"), ("/", "/"), ("", ""),
    ]
    for (path, directory) in cases {
      #expect(PathText.directory(of: path) == directory, "\(path)")
    }
    // Foundation agrees wherever it does not trap.
    for (path, _) in cases where path.count > 1 {
      #expect(PathText.directory(of: path) == (path as NSString).deletingLastPathComponent, "\(path)")
    }
  }
}
