import Foundation
import PayServiceCore
import PayServiceTestSupport

// Apple's merchant validation endpoint as a test server process (AppleSessionTestServer), for
// end-to-end tests and by hand. It is a test server: its sessions are not Apple's and no payment
// sheet accepts them.
//
//   apple-session-test-server --merchant ID --domain D [--domain D2 …] [--now RFC3339]
//
// It writes into a fresh temporary directory the server's CA certificate and a merchant identity
// certificate and key for ID (issued by the CA the server requires client certificates from), and
// prints one JSON line: {"validationURL", "additionalHost" ("localhost:PORT", for the policy's
// additional hosts), "trustRoots", "identityCertificate", "identityKey"} (file paths). Then it
// reads commands on stdin until EOF: `fault hang|reset|500|503` queues a fault for the next
// request; `count` prints {"sessions": N, "connections": N}.

/// One line on stdout, written at once (stdout is a pipe: print alone would buffer it).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("apple-session-test-server: \(message)\n".utf8))
  exit(2)
}

var merchant: String?
var domains: [String] = []
var pinnedNow: Int64?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
  switch argument {
  case "--merchant": merchant = value
  case "--domain": domains.append(value)
  case "--now":
    guard let seconds = RFC3339.parse(value) else { fail("--now \(value) is not an RFC 3339 time") }
    pinnedNow = seconds
  default: fail("unknown argument \(argument); usage: --merchant ID --domain D [--domain D2] [--now RFC3339]")
  }
}
guard let merchant else { fail("--merchant ID is required") }
guard !domains.isEmpty else { fail("at least one --domain is required") }

let clock: @Sendable () -> Int64 = { [pinnedNow] in pinnedNow ?? Int64(Date().timeIntervalSince1970) }
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apple-session-test-server-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let server = try AppleSessionTestServer(registrations: [merchant: domains], now: clock)
let trustRoots = try server.writeServerCA(to: directory)
// Valid from a day before the (pinned) clock for a year, so that a payservice with the same --now
// accepts it and the server, which checks it at the real time, does too.
let identity = try server.identityAuthority.issue(
  merchantIdentifier: merchant, now: Date(timeIntervalSince1970: TimeInterval(clock())))
let files = try identity.write(to: directory)

let announcement = JSONValue.object(
  JSONObject([
    ("validationURL", .string(server.validationURL)),
    ("additionalHost", .string(server.additionalHost)),
    ("trustRoots", .string(trustRoots)),
    ("identityCertificate", .string(files.certificate)),
    ("identityKey", .string(files.key)),
  ]))
say(JSONWriter.string(announcement))
while let line = readLine() {
  let words = line.split(separator: " ")
  switch words.first {
  case "fault":
    switch words.count > 1 ? words[1] : "" {
    case "hang": server.inject(.hang)
    case "reset": server.inject(.reset)
    case "500": server.inject(.internalServerError)
    case "503": server.inject(.serviceUnavailable)
    default: say(#"{"error":"unknown fault; expected hang, reset, 500 or 503"}"#)
    }
  case "count": say(#"{"sessions":\#(server.sessionCount),"connections":\#(server.connectionsAccepted)}"#)
  case nil: continue
  default: say(#"{"error":"unknown command; expected fault or count"}"#)
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
