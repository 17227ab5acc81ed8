import Foundation
import PayServiceTestSupport

// The Stripe test server as a process, for the benchmark and by hand: it prints one JSON line
// (baseURL, the CA file a client must trust, the secret key it accepts), then reads commands on
// stdin until EOF: `latency MS` sets the added latency; `fault reset|delay SECONDS|500|429 SECONDS
// charge|refund|token` queues a fault for the next charge, refund or Apple Pay token
// (StripeTestServer.Fault), or `fault stored500|stored500-executed charge|refund` one whose 500 Stripe
// stores under the key (without or after executing it); `settle-processing PI succeeded|failed` ends a
// PaymentIntent in processing; `expire PI` lets an uncaptured authorization lapse; `count` prints the PaymentIntents, refunds and tokens created so far as
// a JSON line. It is a test server: it
// moves no money.
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
  case "settle-processing" where words.count == 3:
    say(#"{"settled":\#(server.settleProcessing(paymentIntent: String(words[1]), succeeded: words[2] == "succeeded"))}"#)
  case "expire" where words.count == 2:
    say(#"{"expired":\#(server.expireAuthorization(paymentIntent: String(words[1])))}"#)
  case "count":
    say(#"{"paymentIntents":\#(server.paymentIntentCount),"refunds":\#(server.refundCount),"tokens":\#(server.tokenCount)}"#)
  default: say(#"{"error":"unknown command"}"#)
  }
}
server.shutdown()
try? FileManager.default.removeItem(at: directory)
