/// Wallet's `POST /v1/log`: what devices report of trouble with the merchant's order web service,
/// for the operator's log.
public enum LogWalletMessages: RPCMethod {
  public static let name = "logWalletMessages"

  /// The most messages one call logs, and the most characters of each.
  public static let maxMessages = 20
  public static let maxCharacters = 500

  public static let documentation = MethodDocumentation(
    summary: "Wallet's order web service: log what devices report (POST /v1/log).",
    description: """
      For the HTTP front of the walletOrders webServiceURL. Writes each message of logs to payservice's log \
      (stderr) as a warning, after this request's answer: at most \(maxMessages) messages of at most \
      \(maxCharacters) characters each (the rest is cut), control characters removed, and anything that may \
      be personal (email addresses, runs of 6 or more digits) replaced by …. Answers status ok (HTTP 200).
      """,
    errors: [], readOnly: false, idempotent: false)
  public static let usesStore = true

  public struct Params: Sendable {
    public var logs: [String] = []
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "logs", \.logs, .required,
        .array(.string(), "The body's logs, as Wallet sent them.", maxItems: 100),
        read: { value, path, reader in
          guard case .array(let items) = value, items.count <= 100 else {
            reader.fail(path(), "must be an array of at most 100 strings")
            return nil
          }
          var logs: [String] = []
          for (index, item) in items.enumerated() {
            guard case .string(let text) = item, text.utf8.count <= 65_536 else {
              reader.fail("\(path())[\(index)]", "must be a string of at most 65536 bytes")
              return nil
            }
            logs.append(text)
          }
          return logs
        }),
    ])

  public struct Result: MethodResult, WireObject {
    public static let shape = ObjectShape<Result>(blank: { Result() }, [.constant("status", "ok")])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    context.walletDeviceMessages.add(params.logs.prefix(maxMessages).map(redacted))
    return Result()
  }

  /// A message as the log takes it: printable, cut to `maxCharacters`, without email addresses or
  /// long numbers.
  static func redacted(_ message: String) -> String {
    var words: [String] = []
    for word in message.split(whereSeparator: { $0.isWhitespace }) {
      let digits = word.reduce(into: (run: 0, longest: 0)) { state, character in
        state.run = character.isASCII && character.isNumber ? state.run + 1 : 0
        state.longest = max(state.longest, state.run)
      }
      words.append(word.contains("@") || digits.longest >= 6 ? "…" : String(word))
    }
    let printable = words.joined(separator: " ").unicodeScalars.filter { !($0.properties.generalCategory == .control) }
    let text = String(String.UnicodeScalarView(printable))
    return text.count <= maxCharacters ? text : String(text.prefix(maxCharacters)) + "…"
  }
}
