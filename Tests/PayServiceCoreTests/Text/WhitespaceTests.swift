import Foundation
@testable import PayServiceCore
import Testing

/// The whitespace sets used instead of Foundation's `CharacterSet` must be exactly Foundation's.
@Suite("Whitespace")
struct WhitespaceTests {
  static let allScalars: [Unicode.Scalar] = (0...0x10FFFF).compactMap { Unicode.Scalar(UInt32($0)) }

  @Test("isWhitespace is CharacterSet.whitespaces, scalar for scalar over all of Unicode")
  func whitespaces() {
    let mismatches = Self.allScalars.filter { String.isWhitespace($0) != CharacterSet.whitespaces.contains($0) }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { String($0.value, radix: 16) })")
  }

  @Test("isWhitespaceOrNewline is CharacterSet.whitespacesAndNewlines over all of Unicode")
  func whitespacesAndNewlines() {
    let mismatches = Self.allScalars.filter {
      String.isWhitespaceOrNewline($0) != CharacterSet.whitespacesAndNewlines.contains($0)
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { String($0.value, radix: 16) })")
  }

  @Test(
    "trimming and blank checks agree with Foundation's",
    arguments: [
      "", " ", "\t", " \u{3000}\u{A0}", "\n", "code", "  save10 ", "\u{2028}x\u{2029}", "\u{85}Ab c\r\n",
      "e\u{301} ", " \u{1F600}\t", "\u{200B}zero-width", "\u{FEFF}bom",
    ])
  func trimming(_ text: String) {
    #expect(text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(text.isWhitespaceOnly == text.trimmingCharacters(in: .whitespaces).isEmpty)
  }
}
