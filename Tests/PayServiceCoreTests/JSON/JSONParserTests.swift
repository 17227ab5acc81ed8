import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("JSON parser and writer")
struct JSONParserTests {
  static let suiteDirectory = TestPaths.path("Tests/PayServiceCoreTests/Fixtures/JSONTestSuite/test_parsing")

  static func files(prefix: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: suiteDirectory)) ?? []).filter { $0.hasPrefix(prefix) }
      .sorted()
  }

  @Test("JSONTestSuite has its files")
  func suitePresent() {
    #expect(Self.files(prefix: "y_").count == 95)
    #expect(Self.files(prefix: "n_").count == 188)
  }

  @Test(
    "every n_ file is rejected, and through the service is a -32700 with id null (a blank line is not answered)",
    arguments: files(prefix: "n_"))
  func rejects(name: String) throws {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.suiteDirectory)/\(name)")))
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes) }
    let handler = TestConfig.handler(try TestConfig.context())
    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
      #expect(["n_single_space.json", "n_structure_no_data.json"].contains(name))
      #expect(handler.handle(line: bytes) == nil)
      return
    }
    let response = try #require(handler.handle(line: bytes))
    let parsed = try JSONParser.parse(response)
    #expect(parsed["id"] == .null)
    #expect(parsed["error"]?["code"] == .number("-32700"))
  }

  @Test("every y_ file is accepted and answered with valid JSON-RPC", arguments: files(prefix: "y_"))
  func accepts(name: String) throws {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.suiteDirectory)/\(name)")))
    let value = try JSONParser.parse(bytes)
    let handler = TestConfig.handler(try TestConfig.context())
    // A JSON value that is not a request is an Invalid Request (or a batch of them); never a parse error.
    if let response = handler.handle(line: bytes) {
      let parsed = try JSONParser.parse(response)
      let objects: [JSONValue]
      if case .array(let elements) = parsed { objects = elements } else { objects = [parsed] }
      for object in objects {
        #expect(object["jsonrpc"] == .string("2.0"))
        #expect(object["error"]?["code"] == .number("-32600"))
      }
    } else {
      Issue.record("no answer for \(name): \(value)")
    }
  }

  @Test("i_ files never crash the service", arguments: files(prefix: "i_"))
  func implementationDefined(name: String) throws {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.suiteDirectory)/\(name)")))
    let handler = TestConfig.handler(try TestConfig.context())
    let response = try JSONParser.parse(try #require(handler.handle(line: bytes)))
    switch response {
    case .array(let elements): #expect(elements.allSatisfy { $0["error"]?["code"] == .number("-32600") })
    default: #expect(response["jsonrpc"] == .string("2.0"))
    }
  }

  @Test("numbers keep their exact text; strings their code points")
  func exactness() throws {
    let value = try JSONParser.parse(#"{"a":9007199254740993,"b":-0.10e+5,"c":"\u00e9\ud83d\ude00\n","d":"\ud800x"}"#)
    #expect(value["a"] == .number("9007199254740993"))
    #expect(value["b"] == .number("-0.10e+5"))
    #expect(value["c"] == .string("é😀\n"))
    #expect(value["d"] == .string("\u{FFFD}x"))
  }

  @Test("duplicate keys: the last one wins")
  func duplicates() throws {
    #expect(try JSONParser.parse(#"{"k":1,"k":2}"#)["k"] == .number("2"))
  }

  @Test("nesting deeper than the limit is a parse failure, not a crash")
  func depth() throws {
    let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect((try? JSONParser.parse(ok)) != nil)
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
  }

  @Test("NUL bytes and invalid UTF-8 are rejected")
  func hostileBytes() {
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0x00, 0x22]) }
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC0, 0xAF, 0x22]) }
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x7B, 0x00, 0x7D]) }
  }

  @Test("the writer is compact, ordered and escapes only what it must")
  func writer() throws {
    var object = JSONObjectBuilder()
    object.set("z", "a\"b\\c\n\u{01}/é")
    object.set("a", .array([.number("1"), .bool(true), .null]))
    #expect(JSONWriter.string(object.value) == #"{"z":"a\"b\\c\n\u0001/é","a":[1,true,null]}"#)
    let text = #"{"jsonrpc":"2.0","id":"é","result":{"x":[1.50,{"y":"\u001f"}]}}"#
    #expect(JSONWriter.string(try JSONParser.parse(text)) == text)
  }
}
