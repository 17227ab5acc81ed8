/// File path arithmetic without Foundation's `NSString.deletingLastPathComponent`, which traps on a
/// one-character path (`--database s`).
public enum PathText {
  /// The directory part of `path`, as `deletingLastPathComponent` gives it: "" for a bare name,
  /// "/" for a name in the root, and trailing slashes of the name ignored.
  public static func directory(of path: String) -> String {
    var name = Substring(path)
    while name.count > 1, name.hasSuffix("/") { name = name.dropLast() }
    guard let slash = name.lastIndex(of: "/") else { return "" }
    var directory = name[..<slash]
    while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
    return directory.isEmpty ? "/" : String(directory)
  }
}
