import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// The address data accepts an area under every spelling it knows, so rules must find it under
/// every spelling too: a config's `US-CA` tax applies to a contact's `California`, `JP-13`'s to
/// `Tokyo` and `東京都`, on the general path and the borrowed one alike.
@Suite("Area spellings in pricing")
struct AreaSpellingPricingTests {
  static func summary(_ handler: RequestHandler, country: String, area: String, sku: String = "clock") -> String {
    let params = #"{"items":[{"sku":"\#(sku)"}],"shippingContact":{"administrativeArea":"\#(area)","countryCode":"\#(country)"}}"#
    let line = #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":\#(params)}"#
    let borrowed = line.utf8CString.withUnsafeBytes { bytes in
      handler.answersByBothPaths(UnsafeRawBufferPointer(rebasing: bytes.dropLast()))
    }
    if let borrowed { #expect(borrowed.borrowed == borrowed.general, "\(area)") }
    let answer = handler.call("computeSummaryItems", params)
    #expect(answer["result"] != nil, "\(answer.compact)")
    return answer.compact
  }

  @Test("US-CA's tax for CA, California, california and CALIFORNIA; the default rate for NY and Nevada")
  func unitedStates() throws {
    let handler = TestConfig.handler(try TestConfig.context())
    let ca = Self.summary(handler, country: "US", area: "CA")
    #expect(ca.contains(#"{"label":"Tax","amount":"3.63","type":"final"}"#), "\(ca)")
    for spelling in ["California", "california", "CALIFORNIA", " California "] {
      #expect(Self.summary(handler, country: "US", area: spelling) == ca, "\(spelling)")
    }
    let ny = Self.summary(handler, country: "US", area: "NY")
    #expect(ny != ca)
    #expect(Self.summary(handler, country: "US", area: "Nevada") == Self.summary(handler, country: "US", area: "NV"))
  }

  @Test("JP-13's tax for 13, Tokyo, TOKYO and 東京都")
  func japan() throws {
    let config = try ConfigLoader.load(path: TestPaths.path("Tests/EndToEndTests/Golden/currency-jpy/config.yaml"))
    let handler = TestConfig.handler(try TestConfig.context(config: config))
    let tokyo = Self.summary(handler, country: "JP", area: "13", sku: "yunomi")
    #expect(tokyo.contains(#"{"label":"Tax","amount":"266","type":"final"}"#), "\(tokyo)")
    for spelling in ["Tokyo", "TOKYO", "東京都", "JP-13"] {
      #expect(Self.summary(handler, country: "JP", area: spelling, sku: "yunomi") == tokyo, "\(spelling)")
    }
    #expect(Self.summary(handler, country: "JP", area: "大阪府", sku: "yunomi") != tokyo)
  }
}
