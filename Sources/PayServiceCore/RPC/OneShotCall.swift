/// One request from the command line (`payservice call METHOD [PARAMS]`): the answer as a shell
/// wants it. The request goes through the same handler as a served line, with id 1.
public enum OneShotCall {
  /// What to print and how to exit.
  public struct Outcome: Equatable, Sendable {
    /// The result JSON (exit 0), or the JSON-RPC error object (exit 1), with a final LF.
    public var stdout: String
    /// The error's message for people (`payservice: …`), empty on success.
    public var stderr: String
    public var exitCode: Int32
  }

  /// Calls `method` with `paramsText` (JSON text; nil sends no params) through `handler`.
  /// Params that are not JSON are a -32700 error, as on the wire.
  public static func run(method: String, paramsText: String?, handler: RequestHandler, pretty: Bool) -> Outcome {
    var request = JSONObjectBuilder(capacity: 4)
    request.set("jsonrpc", "2.0")
    request.set("id", 1)
    request.set("method", method)
    if let paramsText {
      do {
        request.set("params", try JSONParser.parse(paramsText))
      } catch {
        return failure(
          RPCError.parseError("the params are not JSON: \(error.message) at byte \(error.offset)").json, pretty: pretty)
      }
    }
    var writer = JSONWriter()
    guard handler.handle(value: request.value, into: &writer),
      case .object(let response)? = try? JSONParser.parse(writer.bytes)
    else {
      return failure(RPCError.internalError.json, pretty: pretty)
    }
    if let result = response["result"] {
      return Outcome(stdout: text(result, pretty: pretty), stderr: "", exitCode: 0)
    }
    return failure(response["error"] ?? RPCError.internalError.json, pretty: pretty)
  }

  private static func failure(_ error: JSONValue, pretty: Bool) -> Outcome {
    Outcome(stdout: text(error, pretty: pretty), stderr: "payservice: \(RPCError.readableText(error))\n", exitCode: 1)
  }

  static func text(_ value: JSONValue, pretty: Bool) -> String {
    (pretty ? JSONPrettyPrinter.string(value) : JSONWriter.string(value)) + "\n"
  }
}

/// JSON for people: two-space indents, one member or element per line, `": "` after keys;
/// strings and numbers exactly as the compact writer writes them.
public enum JSONPrettyPrinter {
  public static func string(_ value: JSONValue) -> String {
    var text = ""
    write(value, indent: 0, into: &text)
    return text
  }

  private static func write(_ value: JSONValue, indent: Int, into text: inout String) {
    let inner = String(repeating: "  ", count: indent + 1)
    let outer = String(repeating: "  ", count: indent)
    switch value {
    case .array(let elements) where !elements.isEmpty:
      text += "[\n"
      for (index, element) in elements.enumerated() {
        text += inner
        write(element, indent: indent + 1, into: &text)
        text += index + 1 < elements.count ? ",\n" : "\n"
      }
      text += outer + "]"
    case .object(let object) where !object.members.isEmpty:
      text += "{\n"
      for (index, member) in object.members.enumerated() {
        text += inner + JSONWriter.string(JSONValue.string(member.key)) + ": "
        write(member.value, indent: indent + 1, into: &text)
        text += index + 1 < object.members.count ? ",\n" : "\n"
      }
      text += outer + "}"
    default:
      text += JSONWriter.string(value)
    }
  }
}
