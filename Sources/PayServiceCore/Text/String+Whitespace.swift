/// Whitespace trimming without Foundation's `CharacterSet` (which bridges through NSString and
/// costs a noticeable share of a cold start). Each function names the set it matches.
extension String {
  func trimmingASCIIWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
      return ""
    }
    return String(self[first...last])
  }

  var isBlank: Bool { trimmingASCIIWhitespace().isEmpty }

  /// Foundation's `CharacterSet.whitespaces`: general category Zs, U+0009 and (as Foundation on
  /// Linux has it, from CoreFoundation) U+200B ZERO WIDTH SPACE.
  static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09, 0x20, 0x200B: return true
    case 0..<0x80: return false
    default: return scalar.properties.generalCategory == .spaceSeparator
    }
  }

  /// Foundation's `CharacterSet.whitespacesAndNewlines`: general category Z*, U+000A to U+000D,
  /// U+0085 and U+200B.
  static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09...0x0D, 0x20, 0x85, 0x200B: return true
    case 0..<0x80: return false
    default:
      switch scalar.properties.generalCategory {
      case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
      default: return false
      }
    }
  }

  /// True when every scalar is whitespace in the sense of `CharacterSet.whitespaces` (or there
  /// are none): what `trimmingCharacters(in: .whitespaces).isEmpty` says.
  var isWhitespaceOnly: Bool { unicodeScalars.allSatisfy(String.isWhitespace) }

  /// `trimmingCharacters(in: .whitespacesAndNewlines)`, scalar for scalar.
  func trimmingWhitespaceAndNewlines() -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !String.isWhitespaceOrNewline($0) }),
      let last = scalars.lastIndex(where: { !String.isWhitespaceOrNewline($0) })
    else { return "" }
    return String(scalars[first...last])
  }
}
