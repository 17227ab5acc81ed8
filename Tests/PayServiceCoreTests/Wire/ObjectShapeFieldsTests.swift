import Testing

@testable import PayServiceCore

/// `ObjectShape.fields(at:)`: a nested struct's members read and written flat among the outer
/// object's own, in place.
@Suite("a shape's fields embedded in another object")
struct ObjectShapeFieldsTests {
  struct Inner: Equatable, Sendable {
    var name = ""
    var count = 0
    var note: String?

    static let shape = ObjectShape<Inner>(
      blank: { Inner() },
      [.member("name", \.name), .member("count", \.count), .member("note", \.note, .optional)])
  }

  struct Outer: Equatable, Sendable, WireObject {
    var flag = false
    var inner = Inner()
    var tail = ""

    static let shape = ObjectShape<Outer>(
      blank: { Outer() },
      [.member("flag", \.flag)] + Inner.shape.fields(at: \.inner) + [.member("tail", \.tail)])
  }

  @Test("written flat in order, the nested members at their own place")
  func writes() {
    let outer = Outer(flag: true, inner: Inner(name: "a", count: 7, note: nil), tail: "z")
    #expect(JSONWriter.string(outer) == #"{"flag":true,"name":"a","count":7,"tail":"z"}"#)
    let noted = Outer(flag: false, inner: Inner(name: "b", count: -1, note: "n"), tail: "")
    #expect(JSONWriter.string(noted) == #"{"flag":false,"name":"b","count":-1,"note":"n","tail":""}"#)
  }

  @Test("read back into the nested struct; a nested member's problem names it flat")
  func reads() throws {
    let reader = ParamReader()
    let value = try JSONParser.parse(#"{"flag":true,"name":"c","count":3,"note":"x","tail":"t"}"#)
    #expect(
      Outer.read(value, at: { "" }, reader: reader)
        == Outer(flag: true, inner: Inner(name: "c", count: 3, note: "x"), tail: "t"))
    #expect(reader.errors.isEmpty)

    let bad = ParamReader()
    #expect(Outer.read(try JSONParser.parse(#"{"flag":true,"name":"c","tail":"t"}"#), at: { "" }, reader: bad) == nil)
    #expect(bad.errors.map(\.path) == ["count"])
    #expect(Outer.shape.members.map(\.name) == ["flag", "name", "count", "note", "tail"])
    #expect(Outer.shape.members.map(\.required) == [true, true, true, false, true])
  }
}
