import Crypto
import Foundation
import PayServiceTestSupport

// The APNs test server as a process, by hand: it prints one JSON line (baseURL, the CA file a
// client must trust, the team id and key id it accepts, and the path of the APNs key's .p8 file
// that signs provider tokens for it), then reads commands on stdin until EOF. Its arguments:
// `--key P8_FILE` (a P-256 PKCS#8 PEM key; a fresh one, written beside the CA, when absent),
// `--team-id ID` and `--key-id ID` (default TEAMID0001 and KEYID00001). The commands: `topic TOPIC`
// lets the team push to TOPIC; `device TOKEN TOPIC` registers a device token for TOPIC;
// `unregister TOKEN` marks it unregistered now; `fault 429|500|503|reset [TOKEN]` queues a fault for
// the next push (to TOKEN only, when given); `pushes` prints every push received as a JSON line
// each, then `{"end":true}`. Commands that change something print `{"ok":true}` or `{"ok":false}`.
// It is a test server: it delivers nothing.
let arguments = CommandLine.arguments
func argument(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return arguments[index + 1]
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-test-server-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let keyFile: String
let key: P256.Signing.PrivateKey
if let path = argument("--key") {
  keyFile = path
  key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
} else {
  key = P256.Signing.PrivateKey()
  keyFile = directory.appendingPathComponent("apns-test-key.p8").path
  try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
}
let server = try APNsTestServer(
  teamId: argument("--team-id") ?? "TEAMID0001", keyId: argument("--key-id") ?? "KEYID00001", publicKey: key.publicKey)
let caFile = try server.writeCACertificate(to: directory)
/// One line on stdout, written at once (stdout is a pipe: print alone would buffer it).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
func ok(_ done: Bool) { say(#"{"ok":\#(done)}"#) }
/// A JSON string literal, or null.
func quoted(_ text: String?) -> String {
  guard let text else { return "null" }
  var out = "\""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\\": out += "\\\\"
    case "\"": out += "\\\""
    case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
    default: out.unicodeScalars.append(scalar)
    }
  }
  return out + "\""
}

say(
  #"{"baseURL":\#(quoted(server.baseURL)),"caFile":\#(quoted(caFile)),"teamId":\#(quoted(server.teamId)),"keyId":\#(quoted(server.keyId)),"keyFile":\#(quoted(keyFile))}"#
)
while let line = readLine() {
  let words = line.split(separator: " ").map(String.init)
  switch words.first {
  case "topic" where words.count == 2:
    server.addTopic(words[1])
    ok(true)
  case "device" where words.count == 3:
    server.registerDevice(words[1], topic: words[2])
    ok(true)
  case "unregister" where words.count == 2:
    server.unregister(words[1])
    ok(true)
  case "fault" where words.count == 2 || words.count == 3:
    let fault: APNsTestServer.Fault? =
      switch words[1] {
      case "429": .tooManyRequests(retryAfter: nil)
      case "500": .internalServerError
      case "503": .serviceUnavailable(retryAfter: nil)
      case "reset": .reset
      default: nil
      }
    guard let fault else {
      ok(false)
      continue
    }
    server.inject(fault, deviceToken: words.count == 3 ? words[2] : nil)
    ok(true)
  case "pushes":
    for push in server.pushes {
      say(
        #"{"deviceToken":\#(quoted(push.deviceToken)),"topic":\#(quoted(push.topic)),"pushType":\#(quoted(push.pushType)),"priority":\#(quoted(push.priority)),"payload":\#(quoted(push.payload)),"status":\#(push.status),"reason":\#(quoted(push.reason)),"apnsId":\#(quoted(push.apnsId))}"#
      )
    }
    say(#"{"end":true}"#)
  default: say(#"{"error":"unknown command"}"#)
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
