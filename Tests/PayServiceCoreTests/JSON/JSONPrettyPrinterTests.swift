@testable import PayServiceCore
import Testing

@Suite("Pretty JSON")
struct JSONPrettyPrinterTests {
  @Test("nesting, empty containers and escapes")
  func shapes() throws {
    let compact = #"{"a":[],"b":{},"c":[1,{"d":"x\"y,{}:"}],"e":null,"f":-1.5e3}"#
    #expect(
      JSONPrettyPrinter.indent(compact) == """
        {
          "a": [],
          "b": {},
          "c": [
            1,
            {
              "d": "x\\"y,{}:"
            }
          ],
          "e": null,
          "f": -1.5e3
        }
        """)
    #expect(JSONPrettyPrinter.indent(#""plain""#) == #""plain""#)
  }
}
