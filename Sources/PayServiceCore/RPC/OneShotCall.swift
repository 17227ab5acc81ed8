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
        return failure(.parseError("the params are not JSON: \(error.message) at byte \(error.offset)"), pretty: pretty)
      }
    }
    switch handler.call(request.value) {
    case .success(let result): return Outcome(stdout: text(result, pretty: pretty), stderr: "", exitCode: 0)
    case .failure(let error): return failure(error, pretty: pretty)
    }
  }

  private static func failure(_ error: RPCError, pretty: Bool) -> Outcome {
    Outcome(stdout: text(error, pretty: pretty), stderr: "payservice: \(error.readableText)\n", exitCode: 1)
  }

  static func text(_ value: some JSONRepresentable, pretty: Bool) -> String {
    let compact = JSONWriter.string(value)
    return (pretty ? JSONPrettyPrinter.indent(compact) : compact) + "\n"
  }
}

/// JSON for people: two-space indents, one member or element per line, `": "` after keys, empty
/// containers as `{}` and `[]`; strings and numbers exactly as the compact writer wrote them.
public enum JSONPrettyPrinter {
  /// Indents compact JSON text (as `JSONWriter` writes it: no whitespace outside strings).
  public static func indent(_ compact: String) -> String {
    let bytes = Array(compact.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    var depth = 0
    var inString = false
    var escaped = false
    func newline() {
      out.append(0x0A)
      out.append(contentsOf: repeatElement(0x20, count: 2 * depth))
    }
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      defer { index += 1 }
      if inString {
        out.append(byte)
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
        out.append(byte)
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        out.append(byte)
        let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        if index + 1 < bytes.count && bytes[index + 1] == close {
          out.append(close)
          index += 1
        } else {
          depth += 1
          newline()
        }
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        newline()
        out.append(byte)
      case UInt8(ascii: ","):
        out.append(byte)
        newline()
      case UInt8(ascii: ":"):
        out.append(contentsOf: [UInt8(ascii: ":"), 0x20])
      default:
        out.append(byte)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}
