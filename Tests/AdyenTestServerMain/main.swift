import Foundation
import PayServiceTestSupport

// The Adyen test server as a process, for the benchmark and by hand: it prints one JSON line
// (baseURL, the CA file a client must trust, the API key it accepts, the HMAC key notifications are
// signed with, the merchant account), then reads commands on stdin until EOF. Its arguments:
// `--apple-pay-key PEM_FILE` (the merchant's payment processing key, a P-256 private key in PEM;
// a fresh one when absent) and `--merchant-identifier ID` (the Apple Pay merchant identifier the
// tokens are encrypted for; default merchant.com.seatgeek.SeatGeek). The commands:
// `latency MS` sets the added latency; `fault reset|delay SECONDS|500|429 payments|captures|cancels|refunds|any`
// queues a fault for the next request of that route (AdyenTestServer.Fault); `tamper amount VALUE|currency
// CODE|reference TEXT payments|captures|cancels|refunds|any` makes the next answer of the route carry that
// value instead; `settle PSP authorised|refused` ends a `Received` payment; `refuse-stored ID CODE COUNT`
// refuses the stored method's next COUNT payments with refusalReasonCode CODE; `disable-stored ID` disables a
// stored method; `fail PSP` makes a capture or refund fail later (CAPTURE_FAILED, REFUND_FAILED); `dispute PSP
// VALUE [EVENT]` opens a dispute (EVENT REQUEST_FOR_INFORMATION, NOTIFICATION_OF_CHARGEBACK (the default) or
// CHARGEBACK; prints its pspReference or null); `dispute-event ID EVENT [STATUS]` moves it on (prints whether it
// did); `additional-data FIELD…` selects the optional additionalData fields of payment answers; `clock
// UNIX|wall` fixes the clock or gives it back to the wall; `notifications` prints the queued notifications as
// one Standard webhook body on one line and empties the queue; `count` prints the payments, captures, cancels and
// refunds made so far as a JSON line. Commands that change something and print nothing else print
// `{"ok":true}` or `{"ok":false}`. It is a test server: it moves no money.
let arguments = CommandLine.arguments
func argument(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return arguments[index + 1]
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("adyen-test-server-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let server = try AdyenTestServer(
  applePayMerchantIdentifier: argument("--merchant-identifier") ?? "merchant.com.seatgeek.SeatGeek",
  applePayPrivateKeyPEM: try argument("--apple-pay-key").map { try String(contentsOfFile: $0, encoding: .utf8) })
let caFile = try server.writeCACertificate(to: directory)
/// One line on stdout, written at once (stdout is a pipe: print alone would buffer it).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
func ok(_ done: Bool) { say(#"{"ok":\#(done)}"#) }
/// A JSON string literal (the values printed are the server's own, but a reference may hold anything).
func quoted(_ text: String) -> String {
  "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

say(
  #"{"baseURL":\#(quoted(server.baseURL)),"caFile":\#(quoted(caFile)),"apiKey":\#(quoted(server.apiKey)),"hmacKey":\#(quoted(server.hmacKey)),"merchantAccount":\#(quoted(server.merchantAccount))}"#
)
while let line = readLine() {
  let words = line.split(separator: " ").map(String.init)
  func route(_ word: String?) -> AdyenTestServer.Route? {
    switch word {
    case "payments": .payments
    case "captures": .captures
    case "cancels": .cancels
    case "refunds": .refunds
    case "any": .any
    default: nil
    }
  }
  switch words.first {
  case "latency" where words.count == 2:
    server.setLatency(milliseconds: Int(words[1]) ?? 0)
    ok(true)
  case "fault" where words.count >= 3:
    guard let route = route(words.last) else {
      ok(false)
      continue
    }
    let seconds = words.count == 4 ? Double(words[2]) ?? 1 : 1
    switch words[1] {
    case "reset": server.inject(.resetAfterExecuting, on: route)
    case "delay": server.inject(.delayAfterExecuting(seconds: seconds), on: route)
    case "500": server.inject(.serverErrorBeforeExecuting, on: route)
    case "429": server.inject(.rateLimited, on: route)
    default:
      ok(false)
      continue
    }
    ok(true)
  case "tamper" where words.count == 4:
    let change: AdyenTestServer.Tamper? =
      switch words[1] {
      case "amount": Int64(words[2]).map { .amount($0) }
      case "currency": .currency(words[2])
      case "reference": .reference(words[2])
      default: nil
      }
    guard let change, let route = route(words[3]) else {
      ok(false)
      continue
    }
    server.inject(.tamper(change), on: route)
    ok(true)
  case "settle" where words.count == 3 && (words[2] == "authorised" || words[2] == "refused"):
    ok(server.settle(paymentPspReference: words[1], authorised: words[2] == "authorised"))
  case "refuse-stored" where words.count == 4:
    ok(
      server.refuseStoredPayments(
        storedPaymentMethodId: words[1], refusalReasonCode: Int(words[2]) ?? 0, count: Int(words[3]) ?? 1))
  case "disable-stored" where words.count == 2:
    ok(server.disableStoredPaymentMethod(words[1]))
  case "fail" where words.count == 2:
    ok(server.failModification(pspReference: words[1]))
  case "dispute" where words.count == 3 || words.count == 4:
    let event = words.count == 4 ? AdyenTestServer.DisputeEvent(rawValue: words[3]) : .notificationOfChargeback
    let id = event.flatMap { event in
      Int64(words[2]).flatMap { server.openDispute(paymentPspReference: words[1], value: $0, event: event) }
    }
    say(#"{"dispute":\#(id.map(quoted) ?? "null")}"#)
  case "dispute-event" where words.count == 3 || words.count == 4:
    guard let event = AdyenTestServer.DisputeEvent(rawValue: words[2]) else {
      ok(false)
      continue
    }
    ok(server.advanceDispute(words[1], to: event, disputeStatus: words.count == 4 ? words[3] : nil))
  case "additional-data":
    server.setAdditionalData(Set(words.dropFirst()))
    ok(true)
  case "clock" where words.count == 2 && (words[1] == "wall" || Int64(words[1]) != nil):
    server.setClock(Int64(words[1]))
    ok(true)
  case "notifications":
    say(server.releaseNotifications())
  case "count":
    say(
      #"{"payments":\#(server.paymentCount),"captures":\#(server.captureCount),"cancels":\#(server.cancelCount),"refunds":\#(server.refundCount)}"#
    )
  default: say(#"{"error":"unknown command"}"#)
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
