import Foundation
import PayServiceCore
import PayServiceTestSupport

// Apple Pay's Merchant Token Management API as a test server process (MerchantTokenTestServer),
// for end-to-end tests and by hand. It unlinks no real token.
//
//   merchant-token-test-server --merchant ID [--token TOKEN …] [--event EVENT_ID,TYPE,TOKEN,REASON …]
//                              [--seed FILE]
//
// `--token` adds a token of the merchant that it may unlink; `--event` an event it may fetch (the
// reason is the rest of the value, commas included). `--seed FILE` reads a JSON object
// {"tokens": ["…"], "events": [{"eventId", "eventType", "merchantTokenIdentifier", "reason",
// "card": {"cardCountry", "expirationDate", "fpanSuffix", "longDescription", "shortDescription"}}]}
// (all members optional but the event's four strings; the card's fields as given).
//
// It writes into a fresh temporary directory the server's CA certificate and a merchant identity
// certificate and key for ID (issued by the CA the server requires client certificates from), and
// prints one JSON line: {"baseURL" (the client's apiBase), "merchantIdentifier", "trustRoots",
// "identityCertificate", "identityKey"} (file paths). Then it reads commands on stdin until EOF:
// `fault event|unlink 500|429|reset` queues a fault for the route's next request (`{"ok":true}`);
// `events EVENT_ID` prints {"requests": N} (requests for that event); `unlinks TOKEN` prints
// {"unlinks": N}; `requests` prints every request as a JSON line each, then {"end":true}.

/// One line on stdout, written at once (stdout is a pipe: print alone would buffer it).
func say(_ value: JSONValue) {
  FileHandle.standardOutput.write(Data((JSONWriter.string(value) + "\n").utf8))
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("merchant-token-test-server: \(message)\n".utf8))
  exit(2)
}

struct Seeded {
  var eventId, eventType, token, reason: String
  var card: [String: String]?
}

var merchant: String?
var tokens: [String] = []
var events: [Seeded] = []

/// The events and tokens of a seed file.
@MainActor func readSeed(_ path: String) {
  guard let data = FileManager.default.contents(atPath: path),
    case .object(let seed)? = try? JSONParser.parse(Array(data))
  else { fail("--seed \(path) is not a JSON object") }
  if case .array(let list)? = seed["tokens"] {
    for case .string(let token) in list { tokens.append(token) }
  }
  guard case .array(let list)? = seed["events"] else { return }
  for case .object(let event) in list {
    func text(_ key: String) -> String {
      guard case .string(let value)? = event[key] else { fail("--seed \(path): an event without \(key)") }
      return value
    }
    var card: [String: String]?
    if case .object(let fields)? = event["card"] {
      card = [:]
      for member in fields.members { if case .string(let value) = member.value { card?[member.key] = value } }
    }
    events.append(
      Seeded(
        eventId: text("eventId"), eventType: text("eventType"), token: text("merchantTokenIdentifier"),
        reason: text("reason"), card: card))
  }
}

var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
  switch argument {
  case "--merchant": merchant = value
  case "--token": tokens.append(value)
  case "--event":
    let parts = value.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 4 else { fail("--event \(value) is not EVENT_ID,TYPE,TOKEN,REASON") }
    events.append(Seeded(eventId: parts[0], eventType: parts[1], token: parts[2], reason: parts[3]))
  case "--seed": readSeed(value)
  default:
    fail("unknown argument \(argument); usage: --merchant ID [--token T] [--event ID,TYPE,TOKEN,REASON] [--seed FILE]")
  }
}
guard let merchant else { fail("--merchant ID is required") }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("merchant-token-test-server-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let server = try MerchantTokenTestServer()
for token in tokens { server.addToken(token, merchantId: merchant) }
for event in events {
  server.addEvent(
    eventId: event.eventId, eventType: event.eventType, merchantTokenIdentifier: event.token, reason: event.reason,
    card: event.card, merchantId: merchant)
}
let trustRoots = try server.writeTrustRoots(to: directory)
let files = try server.issueIdentity(merchantIdentifier: merchant, key: .rsa2048).write(to: directory)

say(
  .object(
    JSONObject([
      ("baseURL", .string(server.baseURL)), ("merchantIdentifier", .string(merchant)),
      ("trustRoots", .string(trustRoots)),
      ("identityCertificate", .string(files.certificate)), ("identityKey", .string(files.key)),
    ])))
while let line = readLine() {
  let words = line.split(separator: " ").map(String.init)
  switch (words.first, words.count) {
  case ("fault", 3):
    let route: MerchantTokenTestServer.Route? = words[1] == "event" ? .event : words[1] == "unlink" ? .unlink : nil
    let fault: MerchantTokenTestServer.Fault? =
      switch words[2] {
      case "500": .serverError
      case "429": .rateLimited
      case "reset": .reset
      default: nil
      }
    guard let route, let fault else {
      say(.object(JSONObject([("error", .string("expected fault event|unlink 500|429|reset"))])))
      continue
    }
    server.inject(fault, route: route)
    say(.object(JSONObject([("ok", .bool(true))])))
  case ("events", 2):
    say(.object(JSONObject([("requests", .number(String(server.eventRequests(eventId: words[1]))))])))
  case ("unlinks", 2):
    say(.object(JSONObject([("unlinks", .number(String(server.unlinkCount(token: words[1]))))])))
  case ("requests", 1):
    for request in server.requests {
      say(
        .object(
          JSONObject([
            ("method", .string(request.method)), ("path", .string(request.path)),
            ("requestId", request.requestId.map { .string($0) } ?? .null), ("status", .number(String(request.status))),
          ])))
    }
    say(.object(JSONObject([("end", .bool(true))])))
  case (nil, _): continue
  default:
    say(.object(JSONObject([("error", .string("unknown command; expected fault, events, unlinks or requests"))])))
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
