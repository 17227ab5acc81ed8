@testable import PayServiceCore
import Testing

@Suite("Pretty JSON")
struct JSONPrettyPrinterTests {
  @Test("nesting, empty containers and escapes")
  func shapes() throws {
    let value = try JSONParser.parse(#"{"a":[],"b":{},"c":[1,{"d":"x\"y"}],"e":null,"f":-1.5e3}"#)
    #expect(
      JSONPrettyPrinter.string(value) == """
        {
          "a": [],
          "b": {},
          "c": [
            1,
            {
              "d": "x\\"y"
            }
          ],
          "e": null,
          "f": -1.5e3
        }
        """)
    #expect(JSONPrettyPrinter.string(.string("plain")) == #""plain""#)
  }
}
