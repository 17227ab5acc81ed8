/// URLs in messages for people.
public enum URLText {
  /// `text` with a URL's user info (user name and password) replaced by `***`: everything after
  /// `scheme://` (or from the start, without one) up to the last `@`. The last `@` ends it, not the
  /// first `/`, `?` or `#`, so a password holding any of those unencoded goes whole. Text without
  /// an `@` is returned as it is.
  public static func withoutUserInfo(_ text: String) -> String {
    guard let at = text.lastIndex(of: "@") else { return text }
    let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
    guard start <= at else { return text }
    return String(text[..<start]) + "***" + String(text[at...])
  }
}
