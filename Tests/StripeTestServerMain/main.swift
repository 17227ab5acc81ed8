import Foundation
import PayServiceTestSupport

// The Stripe test server as a process, for the benchmark and by hand: it prints one JSON line
// (baseURL, the CA file a client must trust, the secret key it accepts), then reads commands on
// stdin until EOF: `latency MS` sets the added latency; `fault reset|delay SECONDS|500|429 SECONDS
// charge|refund|token|customer|setup` queues a fault for the next charge, refund, Apple Pay token,
// Customer or SetupIntent (StripeTestServer.Fault), or `fault stored500|stored500-executed
// charge|refund|customer|setup` one whose 500 Stripe stores under the key (without or after executing
// it); `settle-processing PI|SETI succeeded|failed` ends a PaymentIntent or SetupIntent in processing;
// `expire PI` lets an uncaptured authorization lapse; `authenticate SETI [failed]` plays the holder of a
// SetupIntent's card asked to authenticate; `decline-off-session CUS CODE DECLINE_CODE|- COUNT` declines
// the Customer's next COUNT off-session payments; `detach PM` detaches a PaymentMethod from its
// Customer (prints whether it did); `count` prints the PaymentIntents, refunds, tokens, Customers and
// SetupIntents created so far as a JSON line; `dashboard-refund PI [AMOUNT]` refunds as the Dashboard does (prints the refund's id
// or null); `fail-refund RE` makes a refund fail later (`expired_or_canceled_card`); `dispute PI
// [REASON]` opens a dispute (default `fraudulent`; prints its id or null); `dispute-update DP STATUS`
// moves it to `under_review` (or `warning_under_review`); `dispute-close DP won|lost` closes it;
// `clock UNIX|wall` fixes the clock or gives it back to the wall; `events` prints every event's
// payload, oldest first, each on one line (its JSON text with the newlines taken out). It is a test
// server: it moves no money.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stripe-test-server-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let server = try StripeTestServer()
server.setSingleUseTokens(false)
let caFile = try server.writeCACertificate(to: directory)
/// One line on stdout, written at once (stdout is a pipe: print alone would buffer it).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

say(#"{"baseURL":"\#(server.baseURL)","caFile":"\#(caFile)","secretKey":"\#(server.secretKey)"}"#)
while let line = readLine() {
  let words = line.split(separator: " ")
  switch words.first {
  case "latency": server.setLatency(milliseconds: words.count > 1 ? Int(words[1]) ?? 0 : 0)
  case "fault":
    let route: StripeTestServer.Route =
      switch words.last {
      case "refund": .refund
      case "token": .createToken
      case "customer": .createCustomer
      case "setup": .createSetupIntent
      default: .createPaymentIntent
      }
    let seconds = words.count > 3 ? Double(words[2]) ?? 1 : 1
    switch words.count > 1 ? words[1] : "" {
    case "reset": server.inject(.resetAfterExecuting, on: route)
    case "delay": server.inject(.delayAfterExecuting(seconds: seconds), on: route)
    case "500": server.inject(.serverErrorBeforeExecuting, on: route)
    case "429": server.inject(.rateLimited(retryAfterSeconds: Int(seconds)), on: route)
    case "stored500": server.inject(.serverErrorStored(.withoutExecuting), on: route)
    case "stored500-executed": server.inject(.serverErrorStored(.afterExecuting), on: route)
    default: say(#"{"error":"unknown fault"}"#)
    }
  case "settle-processing" where words.count == 3 && words[1].hasPrefix("seti_"):
    say(#"{"settled":\#(server.settleProcessing(setupIntent: String(words[1]), succeeded: words[2] == "succeeded"))}"#)
  case "settle-processing" where words.count == 3:
    say(#"{"settled":\#(server.settleProcessing(paymentIntent: String(words[1]), succeeded: words[2] == "succeeded"))}"#)
  case "authenticate" where words.count == 2 || words.count == 3:
    say(#"{"authenticated":\#(server.authenticateSetupIntent(String(words[1]), succeeded: words.count == 2))}"#)
  case "decline-off-session" where words.count == 5:
    server.declineNextOffSessionCharges(
      customer: String(words[1]), code: String(words[2]), declineCode: words[3] == "-" ? nil : String(words[3]),
      count: Int(words[4]) ?? 1)
    say(#"{"queued":true}"#)
  case "detach" where words.count == 2:
    say(#"{"detached":\#(server.detachPaymentMethod(String(words[1])))}"#)
  case "expire" where words.count == 2:
    say(#"{"expired":\#(server.expireAuthorization(paymentIntent: String(words[1])))}"#)
  case "dashboard-refund" where words.count == 2 || words.count == 3:
    let id = server.refundFromDashboard(
      paymentIntent: String(words[1]), amount: words.count == 3 ? Int64(words[2]) : nil)
    say(#"{"refund":\#(id.map { "\"\($0)\"" } ?? "null")}"#)
  case "fail-refund" where words.count == 2:
    say(#"{"failed":\#(server.failRefund(String(words[1])))}"#)
  case "dispute" where words.count == 2 || words.count == 3:
    let id = server.openDispute(
      paymentIntent: String(words[1]), reason: words.count == 3 ? String(words[2]) : "fraudulent")
    say(#"{"dispute":\#(id.map { "\"\($0)\"" } ?? "null")}"#)
  case "dispute-update" where words.count == 3:
    say(#"{"updated":\#(server.updateDispute(String(words[1]), status: String(words[2])))}"#)
  case "dispute-close" where words.count == 3 && (words[2] == "won" || words[2] == "lost"):
    say(#"{"closed":\#(server.closeDispute(String(words[1]), won: words[2] == "won"))}"#)
  case "clock" where words.count == 2:
    server.setClock(words[1] == "wall" ? nil : Int64(words[1]))
  case "events":
    // Stripe's pretty-printed JSON on one line: the newlines and the indentation after them go
    // (no string the server writes holds a raw newline: JSON escapes it).
    for event in server.events() {
      say(event.payload.split(separator: "\n").map { $0.drop { $0 == " " } }.joined())
    }
  case "count":
    say(
      #"{"paymentIntents":\#(server.paymentIntentCount),"refunds":\#(server.refundCount),"tokens":\#(server.tokenCount),"customers":\#(server.customerRecords().count),"setupIntents":\#(server.setupIntentRecords().count)}"#
    )
  default: say(#"{"error":"unknown command"}"#)
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
