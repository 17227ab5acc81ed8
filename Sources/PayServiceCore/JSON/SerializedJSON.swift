/// JSON text written once by a `JSONWriter` and kept, to be embedded again without being parsed
/// and rewritten (a document built at first use, a result sent twice). It can only be made from a
/// value, so what is embedded is always complete, valid JSON.
public struct SerializedJSON: Equatable, Sendable, MethodResult {
  public let text: String

  public init(_ value: some JSONRepresentable) {
    text = JSONWriter.string(value)
  }

  /// What `writer` wrote: one complete value.
  init(writtenBy writer: borrowing JSONWriter) {
    text = writer.string
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(serialized: self)
  }
}
