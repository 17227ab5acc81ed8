import Testing

@testable import PayServiceCore

@Suite("Config region codes")
struct RegionCodeTests {
  /// The reading isRegionCode had before it read bytes, split on the "-" character.
  static func reference(_ text: String) -> Bool {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard let country = parts.first, ConfigDecoder.isCountryCode(String(country)), parts.count <= 2 else {
      return false
    }
    if parts.count == 2 {
      let area = parts[1]
      return (1...3).contains(area.utf8.count)
        && area.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }
    return true
  }

  @Test("region codes: the byte reading agrees with the split reading on 50,000 generated texts")
  func agreesWithReference() {
    #expect(ConfigDecoder.isRegionCode("US") && ConfigDecoder.isRegionCode("US-CA") && ConfigDecoder.isRegionCode("GB-1A2"))
    #expect(!ConfigDecoder.isRegionCode("us") && !ConfigDecoder.isRegionCode("US-") && !ConfigDecoder.isRegionCode("US-CAL1"))
    var generator = SystemRandomNumberGenerator()
    let pieces = ["U", "S", "C", "A", "1", "-", "-", "a", "\u{301}", "é", " ", "Z"]
    var accepted = 0
    for _ in 0..<50_000 {
      let text = (0..<Int.random(in: 0...7, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
        .joined()
      let ours = ConfigDecoder.isRegionCode(text)
      #expect(ours == Self.reference(text), "\(text)")
      if ours { accepted += 1 }
    }
    #expect(accepted > 500)
  }
}
