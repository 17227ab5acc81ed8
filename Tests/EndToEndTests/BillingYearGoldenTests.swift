import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A year of agreements through the built binary and the sandbox, one process per step with the
/// clock moved forward on one store: a monthly subscription with a trial billed 12 times (its first
/// renewal declined and recovered by the retry a day later, two months caught up by one late run),
/// a pre-order charged on its payment date (and refused a late cancellation), an automatic reload
/// charged twice, a second subscription cancelled at its period's end and never charged again, and
/// a renewal refunded by line.
///
/// A stepped golden case (Golden/billing-year): requests.jsonl and responses.jsonl are written by
/// the run and compared byte for byte, the same bytes from every store backend. Re-record with
/// `PAYSERVICE_RECORD_GOLDEN=1`, like every golden case.
@Suite("Golden: a year of agreements", .serialized)
struct BillingYearGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("billing-year")
  static let config = folder.appendingPathComponent("config.yaml").path
  static let contact =
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#

  /// A stepped case's requests and answers, one payservice process per clock on one store (also
  /// AppStoreGoldenTests').
  final class Year {
    let database: String
    let config: String
    let backOffice: Bool
    var requests: [String] = []
    var responses: [String] = []
    private var running: RunningPayservice?

    init(database: String, config: String = BillingYearGoldenTests.config, backOffice: Bool = true) {
      self.database = database
      self.config = config
      self.backOffice = backOffice
    }

    /// Ends the current process and starts one at `now`.
    func at(_ now: String) throws {
      running?.finish()
      running = try RunningPayservice(
        ["--config", config, "--database", database, "--now", now, "--quiet"] + (backOffice ? ["--back-office"] : []),
        environment: ProcessInfo.processInfo.environment.merging([IdentifierKey.pinVariable: TestConfig.identifierKey.hex]) { $1 })
    }

    func finish() { running?.finish() }

    /// Sends a request (its id is the next number) and returns the whole answer.
    @discardableResult
    func send(_ method: String, _ params: String = "{}") throws -> JSONValue {
      let line = #"{"jsonrpc":"2.0","id":\#(requests.count + 1),"method":"\#(method)","params":\#(params)}"#
      requests.append(line)
      let answer = try #require(running).ask(line, timeout: 30)
      responses.append(answer)
      return try JSONParser.parse(answer)
    }

    /// Sends a request and returns its result.
    @discardableResult
    func ask(_ method: String, _ params: String = "{}") throws -> JSONValue {
      let answer = try send(method, params)
      return try #require(answer["result"], "\(answer.compact)")
    }

    /// Authorizes a cart of one `sku` paid with `paymentData` and places the order: its result.
    func checkout(_ sku: String, _ paymentData: String) throws -> JSONValue {
      let items = #"[{"sku":"\#(sku)"}]"#
      let authorized = try ask(
        "authorizePayment",
        #"{"items":\#(items),"shippingMethod":"standard","payment":{"token":{"paymentData":"\#(paymentData)","paymentMethod":{"displayName":"Visa 0492","network":"visa","type":"credit"},"transactionIdentifier":"TXN-\#(sku)"},"shippingContact":\#(BillingYearGoldenTests.contact)}}"#
      )
      let token = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
      let amount = try #require(authorized["amount"]?.stringValue)
      return try ask(
        "processOrder",
        #"{"chargeToken":"\#(token)","items":\#(items),"shippingMethod":"standard","shippingContact":\#(BillingYearGoldenTests.contact),"amount":"\#(amount)","currencyCode":"USD"}"#
      )
    }

    func runBilling() throws -> JSONValue { try ask("runBilling") }
  }

  /// The statuses and agreement statuses of a run's payments, for the checks along the way.
  static func outcomes(_ run: JSONValue) -> [String] {
    (run["payments"]?.arrayValue ?? []).map {
      "\($0["period"].map(\.compact) ?? "-") \($0["status"]?.stringValue ?? "") \($0["agreementStatus"]?.stringValue ?? "")"
    }
  }

  @Test("the year: 12 renewals with a declined one recovered, a pre-order, two reloads, a cancellation at period end", arguments: StoreBackend.available)
  func year(backend: StoreBackend) throws {
    let year = Year(database: try backend.freshDatabase())
    defer { year.finish() }

    try year.at("2026-12-01T10:00:00Z")
    let beans = try year.checkout("beans-club", "tok_visa_laterDeclinedOnce")
    let tea = try year.checkout("tea-club", "tok_visa")
    let card = try year.checkout("cafe-card", "tok_visa")
    let machine = try year.checkout("espresso-machine", "tok_visa")
    let ids = try [beans, tea, card, machine].map {
      try #require($0["order"]?["agreement"]?["agreementId"]?.stringValue, "\($0.compact)")
    }
    let (beansId, teaId, cardId, machineId) = (ids[0], ids[1], ids[2], ids[3])
    #expect([beans, tea, card, machine].map { $0["amount"]?.stringValue } == ["5.36", "12.87", "26.81", "0.00"])
    let listed = try year.ask("listAgreements")
    #expect(listed["agreements"]?.arrayValue?.count == 4)

    // The trial ends: the first renewal is declined, and past due; reloads by reloadId.
    try year.at("2026-12-15T12:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["0 failed past_due"])
    let reload = try year.ask("reloadBalance", #"{"agreementId":"\#(cardId)","balance":"3.10","reloadId":"r-1"}"#)
    #expect(reload["status"] == .string("succeeded"), "\(reload.compact)")
    #expect(try year.ask("reloadBalance", #"{"agreementId":"\#(cardId)","balance":"3.10","reloadId":"r-1"}"#) == reload)
    #expect(
      try year.ask("reloadBalance", #"{"agreementId":"\#(cardId)","balance":"12.00","reloadId":"r-2"}"#)["status"]
        == .string("not_needed"))
    #expect(
      try year.send("reloadBalance", #"{"agreementId":"\#(cardId)","balance":"4.00","reloadId":"r-1"}"#)["error"]?["code"]
        == .number("-32004"))

    // A day later the retry goes through.
    try year.at("2026-12-16T12:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["0 succeeded active"])

    // The tea club is cancelled at its period's end: it ends uncharged when the next one comes.
    try year.at("2026-12-20T09:00:00Z")
    let cancel = #"{"agreementId":"\#(teaId)","cancelId":"cancel-tea","atPeriodEnd":true}"#
    let cancelled = try year.ask("cancelAgreement", cancel)
    #expect(cancelled["agreement"]?["cancelAtPeriodEnd"] == .bool(true), "\(cancelled.compact)")
    #expect(try year.ask("cancelAgreement", cancel) == cancelled)
    try year.at("2027-01-01T10:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["1 ended canceled"])

    try year.at("2027-01-15T10:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["1 succeeded active"])
    try year.at("2027-02-15T10:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["2 succeeded active"])

    // Past its free cancellation date the pre-order stays; it is charged on its payment date.
    try year.at("2027-02-25T10:00:00Z")
    let late = try year.ask("cancelAgreement", #"{"agreementId":"\#(machineId)","cancelId":"cancel-machine"}"#)
    #expect(late["failureCode"] == .string("cancellation_not_free"), "\(late.compact)")
    try year.at("2027-03-01T17:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["0 succeeded completed"])
    try year.ask("getAgreement", #"{"agreementId":"\#(machineId)"}"#)

    for month in ["03", "04"] {
      try year.at("2027-\(month)-15T10:00:00Z")
      #expect(Self.outcomes(try year.runBilling()).count == 1)
    }
    // May's run does not happen; June's reload, then June's run charges May and June.
    try year.at("2027-06-10T08:00:00Z")
    #expect(
      try year.ask("reloadBalance", #"{"agreementId":"\#(cardId)","balance":"4.00","reloadId":"r-3"}"#)["status"]
        == .string("succeeded"))
    try year.at("2027-06-15T10:00:00Z")
    #expect(Self.outcomes(try year.runBilling()) == ["5 succeeded active", "6 succeeded active"])
    for month in ["07", "08", "09", "10", "11"] {
      try year.at("2027-\(month)-15T10:00:00Z")
      #expect(Self.outcomes(try year.runBilling()).count == 1)
    }

    // The year's end: the subscription's history, its renewals among the orders, one refunded by line.
    try year.at("2027-11-20T12:00:00Z")
    let history = try year.ask("getAgreement", #"{"agreementId":"\#(beansId)"}"#)["agreement"]
    let events = history?["events"]?.arrayValue ?? []
    #expect(events.filter { $0["type"] == .string("paid") }.count == 12)
    #expect(events.filter { $0["type"] == .string("declined") }.count == 1)
    #expect(history?["period"] == .number("12"))
    let orders = try year.ask("listOrders", #"{"limit":3}"#)["orders"]?.arrayValue ?? []
    #expect(orders.map { $0["agreementId"]?.stringValue } == [beansId, beansId, beansId])
    let renewal = try #require(orders.first?["orderId"]?.stringValue)
    let refund = try year.ask(
      "refundOrder", #"{"orderId":"\#(renewal)","refundId":"rf-renewal","lines":[{"sku":"beans-club","quantity":1,"restock":"return"}]}"#)
    #expect(refund["status"] == .string("succeeded"), "\(refund.compact)")
    #expect(try year.ask("getOrder", #"{"orderId":"\#(renewal)"}"#)["order"]?["status"] == .string("refunded"))
    let reloads = try year.ask("getAgreement", #"{"agreementId":"\#(cardId)"}"#)["agreement"]?["events"]?.arrayValue ?? []
    #expect(reloads.filter { $0["type"] == .string("paid") }.count == 2)
    let teaEvents = try year.ask("getAgreement", #"{"agreementId":"\#(teaId)"}"#)["agreement"]?["events"]?.arrayValue ?? []
    #expect(teaEvents.filter { $0["type"] == .string("paid") }.isEmpty)
    try year.ask("listAgreements", #"{"status":"active"}"#)
    #expect(
      try year.send("getAgreement", #"{"agreementId":"agr_unknown"}"#)["error"]?["code"] == .number("-32005"))
    try year.ask("payoutReport", #"{"from":"2026-12-01","to":"2027-11-20"}"#)
    year.finish()

    try GoldenTranscriptTests.checkStepped("billing-year", requests: year.requests, responses: year.responses, backend: backend)
  }

  @Test("payservice billing run: exit 1 when a payment failed, 0 when all went through or none was due, 2 for a bad config")
  func billingRunCommand() throws {
    let database = try StoreBackend.sqlite.freshDatabase()
    let year = Year(database: database)
    try year.at("2026-12-01T10:00:00Z")
    _ = try year.checkout("beans-club", "tok_visa_laterDeclinedOnce")
    year.finish()
    func run(_ now: String, config: String = Self.config) throws -> (status: Int32, payments: [String]) {
      let result = try PayserviceProcess.run(["billing", "run", "--config", config, "--database", database, "--now", now])
      let payments = (try? JSONParser.parse(result.stdoutText))?["payments"]?.arrayValue ?? []
      return (result.status, payments.map { "\($0["period"]?.compact ?? "") \($0["status"]?.stringValue ?? "")" })
    }
    let declined = try run("2026-12-15T12:00:00Z")
    #expect(declined.status == 1 && declined.payments == ["0 failed"])
    let retried = try run("2026-12-16T12:00:00Z")
    #expect(retried.status == 0 && retried.payments == ["0 succeeded"])
    let nothingDue = try run("2026-12-20T12:00:00Z")
    #expect(nothingDue.status == 0 && nothingDue.payments == [])
    let broken = try PayserviceProcess.run(
      ["billing", "run", "--config", "/nonexistent/config.yaml", "--database", database, "--now", "2026-12-20T12:00:00Z"])
    #expect(broken.status == 2 && broken.stdout.isEmpty)
  }
}
