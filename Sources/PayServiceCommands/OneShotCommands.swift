import ArgumentParser
import Foundation
import PayServiceCore

/// What a one-shot command answers with: the config, store and clock of its options, opened as
/// `serve` opens them (an invalid config or a store that cannot open exits 2), and a handler that
/// answers requests the way a served line is answered.
struct OneShotSession {
  let handler: RequestHandler
  private let log: RequestLog
  private let gateway: GatewayCalls?
  private let sessions: MerchantSessionCalls?
  private let appStore: AppStoreServerCalls?

  init(_ service: ServiceOptions, backOffice: Bool) {
    let loaded: Config
    do {
      loaded = try ConfigLoader.load(path: service.config)
    } catch {
      ServeSettings.fail("invalid config:\n\(error)")
    }
    let store = ServeSettings.openStore(service.database, now: service.now)
    do {
      try store.seedStock(loaded.catalog)
    } catch {
      ServeSettings.fail("\(error)")
    }
    log = RequestLog(level: .warnings)
    let clock = ServiceClock(pinned: service.now.flatMap(RFC3339.parse))
    let checks = ServeSettings.startChecks(for: loaded, now: clock.now())
    if let problem = checks.problems.first { ServeSettings.fail(problem) }
    for warning in checks.warnings { log.warning(warning) }
    gateway = ServeSettings.gateway(for: loaded)
    sessions = ServeSettings.merchantSessions(for: loaded)
    appStore = ServeSettings.appStoreServer(for: loaded)
    handler = RequestHandler(
      context: ServiceContext(
        config: loaded, store: store, clock: clock, gateway: gateway, merchantSessions: sessions,
        appStoreServer: appStore, backOffice: backOffice),
      methods: .payservice(backOffice: backOffice), log: log)
  }

  var context: ServiceContext { handler.context }

  /// One request's outcome, nothing printed.
  func call(method: String, paramsText: String?, pretty: Bool) -> OneShotCall.Outcome {
    OneShotCall.run(method: method, paramsText: paramsText, handler: handler, pretty: pretty)
  }

  /// Answers one request, prints it as `payservice call` does, ends the session and returns the exit status.
  func answer(method: String, paramsText: String?, pretty: Bool, to responses: Int32) -> Int32 {
    let outcome = call(method: method, paramsText: paramsText, pretty: pretty)
    close()
    Call.write(outcome.stdout, to: responses)
    Call.write(outcome.stderr, to: STDERR_FILENO)
    return outcome.exitCode
  }

  func close() {
    log.flush()
    gateway?.shutdown()
    sessions?.shutdown()
    appStore?.shutdown()
  }

  /// `params` as JSON object text.
  static func params(_ members: [(String, JSONValue)]) -> String {
    var object = JSONObjectBuilder(capacity: members.count)
    for (name, value) in members { object.set(name, value) }
    return JSONWriter.string(object.value)
  }
}

/// A one-shot of the back office: one request of `method`, answered as `payservice call … --back-office`.
protocol BackOfficeOneShot: ParsableCommand {
  var service: ServiceOptions { get }
  var pretty: Bool { get }
  /// The method and its params.
  func request() -> (method: String, params: [(String, JSONValue)])
}

extension BackOfficeOneShot {
  func run() throws {
    let responses = StdoutGuard.install()
    let (method, params) = request()
    let code = OneShotSession(service, backOffice: true).answer(
      method: method, paramsText: OneShotSession.params(params), pretty: pretty, to: responses)
    Foundation.exit(code)
  }
}

/// `payservice stripe reconcile`: catch up with Stripe.
struct StripeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stripe",
    abstract: "Catch up with Stripe (the back office's reconcileStripe).",
    subcommands: [Reconcile.self])

  struct Reconcile: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Take in the payments, refunds and disputes Stripe made since a time (reconcileStripe).",
      discussion: """
        Calls reconcileStripe --limit objects at a time, each call going on from where the last stopped, until \
        Stripe lists nothing more; after each call a line on stderr says how far it got. Prints one JSON \
        object: status succeeded, since, calls, listed (objects of each kind), effects (changes of each \
        effect), and orders, the changes order by order (the first 1000 orders; ordersOmitted counts the \
        rest). Exits 0 when every list was read; prints the failed result and exits 1 when Stripe could not \
        be read (what earlier calls took in stays); an invalid config or store exits 2. Running it again \
        changes nothing. For cron: run it daily with --since a few days back.
        """)

    @Option(help: "Take in what Stripe made at or after this RFC 3339 time.")
    var since: String

    @Option(help: "Objects read per reconcileStripe call (1 to 2000).")
    var limit = ReconcileStripe.defaultLimit

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func validate() throws {
      guard (1...ReconcileStripe.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to 2000") }
    }

    /// The orders whose changes are listed at most in what is printed.
    static let listed = 1000

    func run() throws {
      let responses = StdoutGuard.install()
      let calls = PagedCalls(
        session: OneShotSession(service, backOffice: true), method: ReconcileStripe.name,
        command: "payservice stripe reconcile")
      let kinds = ["paymentIntents", "refunds", "disputes"]
      var listed = Dictionary(uniqueKeysWithValues: kinds.map { ($0, 0) })
      var effects: [String: Int] = [:]
      var orders: [(orderId: String, changes: [JSONValue])] = []
      var positions: [String: Int] = [:]
      var omitted: Set<String> = []
      var failed: JSONObject?
      var runSince = JSONValue.null
      var made = 0
      let failure = calls.run(
        [("since", .string(since)), ("limit", .number(String(limit)))],
        next: { result in
          guard failed == nil, case .string(let cursor)? = result["cursor"] else { return nil }
          return [("limit", .number(String(limit))), ("cursor", .string(cursor))]
        },
        take: { result in
          guard result["status"] == .string("succeeded"), case .object(let counts)? = result["listed"],
            case .array(let changed)? = result["orders"], case .array(let counted)? = result["effects"]
          else {
            failed = result
            return "Stripe not read"
          }
          made += 1
          runSince = result["since"] ?? .null
          for kind in kinds {
            if case .number(let count)? = counts[kind] { listed[kind, default: 0] += Int(count) ?? 0 }
          }
          for case .object(let entry) in counted {
            if case .string(let effect)? = entry["effect"], case .number(let count)? = entry["count"] {
              effects[effect, default: 0] += Int(count) ?? 0
            }
          }
          for case .object(let order) in changed {
            guard case .string(let orderId)? = order["orderId"], case .array(let changes)? = order["changes"] else { continue }
            if let at = positions[orderId] {
              orders[at].changes += changes
            } else if orders.count < Self.listed {
              positions[orderId] = orders.count
              orders.append((orderId, changes))
            } else {
              omitted.insert(orderId)
            }
          }
          return kinds.map { "\(listed[$0] ?? 0) \($0)" }.joined(separator: ", ") + " listed, "
            + "\(effects.values.reduce(0, +)) changes"
        })
      if let failure { calls.fail(failure, pretty: pretty, to: responses) }
      if let failed { calls.finish(.object(failed), pretty: pretty, to: responses, status: 1) }
      var summary = JSONObjectBuilder(capacity: 8)
      summary.set("status", "succeeded")
      summary.set("since", runSince)
      summary.set("calls", made)
      var counts = JSONObjectBuilder(capacity: 3)
      for kind in kinds { counts.set(kind, listed[kind] ?? 0) }
      summary.set("listed", counts.value)
      summary.set(
        "effects",
        .array(
          effects.keys.sorted().map { effect in
            var entry = JSONObjectBuilder(capacity: 2)
            entry.set("effect", effect)
            entry.set("count", effects[effect] ?? 0)
            return entry.value
          }))
      summary.set(
        "orders",
        .array(
          orders.map { order in
            var entry = JSONObjectBuilder(capacity: 2)
            entry.set("orderId", order.orderId)
            entry.set("changes", .array(order.changes))
            return entry.value
          }))
      summary.set("ordersOmitted", omitted.count)
      calls.finish(summary.value, pretty: pretty, to: responses, status: 0)
    }
  }
}

/// `payservice billing run`: the billing run, for cron or a systemd timer.
struct BillingCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "billing",
    abstract: "Collect what agreements promised (the back office's runBilling).",
    subcommands: [Run.self])

  struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Charge every agreement payment due: subscription periods, pre-orders, retries (runBilling).",
      discussion: """
        Calls runBilling --limit payments at a time, each call going on from where the last stopped, until \
        nothing more is due; after each call a line on stderr says how far it got. Prints one JSON object: \
        until, calls, the counts of succeeded, failed, pending, skipped and ended payments, charged (one total \
        per currency), and notThrough, the payments that did not go through (the first 1000; \
        notThroughOmitted counts the rest). Exits 0 when every payment due went through (or none was due), 1 \
        when any failed, is pending at the gateway or was skipped, 2 for an invalid config or store. Runs \
        that overlap (two hosts, a slow cron) or a run killed and started again charge each payment once. \
        For cron: every hour, or a systemd timer with Persistent=true.
        """)

    @Option(help: "Charge payments due at or before this RFC 3339 time (default and latest: now).")
    var until: String?

    @Option(help: "Payments per runBilling call (1 to 2000).")
    var limit = RunBilling.defaultLimit

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func validate() throws {
      guard (1...RunBilling.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to 2000") }
    }

    /// The payments that did not go through listed at most in what is printed.
    static let listed = 1000

    func run() throws {
      let responses = StdoutGuard.install()
      let calls = PagedCalls(
        session: OneShotSession(service, backOffice: true), method: RunBilling.name, command: "payservice billing run")
      var first: [(String, JSONValue)] = [("limit", .number(String(limit)))]
      if let until { first.append(("until", .string(until))) }
      let counted = ["succeeded", "failed", "pending", "skipped", "ended"]
      var counts = Dictionary(uniqueKeysWithValues: counted.map { ($0, 0) })
      var charged = CurrencyTotal.Sums()
      var notThrough: [JSONValue] = []
      var omitted = 0
      var runUntil = JSONValue.null
      var made = 0
      let failure = calls.run(
        first,
        next: { result in
          guard case .string(let cursor)? = result["cursor"] else { return nil }
          return [("limit", .number(String(limit))), ("cursor", .string(cursor))]
        },
        take: { result in
          made += 1
          runUntil = result["until"] ?? .null
          for name in counted {
            if case .number(let count)? = result[name] { counts[name, default: 0] += Int(count) ?? 0 }
          }
          guard case .array(let totals)? = result["charged"], case .array(let payments)? = result["payments"] else {
            return "an answer without its payments"
          }
          for case .object(let total) in totals {
            if case .string(let amount)? = total["amount"], case .string(let code)? = total["currencyCode"] {
              charged.add(amount, code)
            }
          }
          for payment in payments {
            guard case .object(let fields) = payment, case .string(let status)? = fields["status"], ["failed", "pending", "skipped"].contains(status) else {
              continue
            }
            if notThrough.count < Self.listed { notThrough.append(payment) } else { omitted += 1 }
          }
          let paid = counted.map { counts[$0] ?? 0 }.reduce(0, +)
          return "\(paid) payments: " + counted.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        })
      if let failure { calls.fail(failure, pretty: pretty, to: responses) }
      var summary = JSONObjectBuilder(capacity: 10)
      summary.set("until", runUntil)
      summary.set("calls", made)
      for name in counted { summary.set(name, counts[name] ?? 0) }
      summary.set(
        "charged",
        .array(
          charged.totals.map { total in
            var object = JSONObjectBuilder(capacity: 2)
            object.set("currencyCode", total.currencyCode)
            object.set("amount", total.amount)
            return object.value
          }))
      summary.set("notThrough", .array(notThrough))
      summary.set("notThroughOmitted", omitted)
      let complete = ["failed", "pending", "skipped"].allSatisfy { (counts[$0] ?? 0) == 0 }
      calls.finish(summary.value, pretty: pretty, to: responses, status: complete ? 0 : 1)
    }
  }
}

/// `payservice stock list|adjust|set`: the store's stock, by hand.
struct StockCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stock",
    abstract: "List or change the store's stock (the back office's listStock and adjustStock).",
    discussion: """
      Each prints the method's result JSON (exit 0), or its error object (exit 1), like payservice call; \
      an invalid config or store exits 2. The config seeds a product's stock only the first time the store \
      sees it: after that, change it here.
      """,
    subcommands: [List.self, Adjust.self, Set.self])

  struct List: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Every product's stock on hand and sold, beside the config's seed (listStock).")

    @Argument(help: "Only this sku, with its stock changes made by hand.")
    var sku: String?

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func request() -> (method: String, params: [(String, JSONValue)]) {
      ("listStock", sku.map { [("sku", .string($0))] } ?? [])
    }
  }

  /// What every change of stock takes besides its sku and number: the key, the reason, where.
  struct Change: ParsableArguments {
    @Option(help: "Your idempotency key for this change: the same id again changes nothing more.")
    var id: String

    @Option(help: "Why, for the stock's history.")
    var reason: String

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    /// adjustStock with `sku` and `amount` (`delta` or `set`).
    func request(sku: String, _ amount: (String, Int)) -> (method: String, params: [(String, JSONValue)]) {
      (
        "adjustStock",
        [
          ("adjustmentId", .string(id)), ("sku", .string(sku)), (amount.0, .number(String(amount.1))),
          ("reason", .string(reason)),
        ]
      )
    }
  }

  struct Adjust: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Add units to a sku's stock on hand, or take them off with a negative DELTA (adjustStock).")

    @Argument(help: "The product.")
    var sku: String

    @Argument(help: "Units to add; negative to take off (write it after --, as in -- -3).")
    var delta: Int

    @OptionGroup var change: Change

    var service: ServiceOptions { change.service }
    var pretty: Bool { change.pretty }
    func request() -> (method: String, params: [(String, JSONValue)]) { change.request(sku: sku, ("delta", delta)) }
  }

  struct Set: BackOfficeOneShot {
    static let configuration = CommandConfiguration(abstract: "Set a sku's stock on hand to a count (adjustStock).")

    @Argument(help: "The product.")
    var sku: String

    @Argument(help: "The units on hand counted.")
    var quantity: Int

    @OptionGroup var change: Change

    var service: ServiceOptions { change.service }
    var pretty: Bool { change.pretty }
    func request() -> (method: String, params: [(String, JSONValue)]) { change.request(sku: sku, ("set", quantity)) }
  }
}

/// `payservice erase`: one buyer's or one order's personal data erased on request.
struct Erase: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Erase one buyer's (or one order's) personal data from orders and payments (erasePersonalData).",
    discussion: """
      Names, street lines, localities, email addresses and phone numbers go; country, region, postal prefix \
      and every amount stay for tax and the books. Prints each erasePersonalData result as one JSON line, \
      like payservice call; while one says "more": true, calls it again under the erasure id with -2, -3, … \
      appended, so the same command again erases nothing twice. A line on stderr says how far it got.
      """)

  @Option(help: "The buyer's email address.")
  var emailAddress: String?

  @Option(help: "One order.")
  var orderId: String?

  @Option(help: "Your idempotency key for this erasure: the same id again erases nothing more.")
  var erasureId: String

  @OptionGroup var service: ServiceOptions

  @Flag(help: "Indent the JSON printed.")
  var pretty = false

  func validate() throws {
    if (emailAddress == nil) == (orderId == nil) { throw ValidationError("give exactly one of --email-address and --order-id") }
  }

  func run() throws {
    let responses = StdoutGuard.install()
    var selector: [(String, JSONValue)] = []
    if let emailAddress { selector.append(("emailAddress", .string(emailAddress))) }
    if let orderId { selector.append(("orderId", .string(orderId))) }
    let calls = PagedCalls(
      session: OneShotSession(service, backOffice: true), method: ErasePersonalData.name, command: "payservice erase")
    calls.erasing(
      key: { round in round == 1 ? erasureId : "\(erasureId)-\(round)" }, selector, pretty: pretty, to: responses)
  }
}

/// `payservice retention`: erases the personal data older than the config's retention, for a daily timer.
struct Retention: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Erase personal data older than privacy.retainPersonalDataDays (run it daily).",
    discussion: """
      Erases, in batches (--batch, 500 by default), the personal data of every payment authorized more \
      than privacy.retainPersonalDataDays days ago (erasePersonalData with before and limit). Each batch's \
      erasureId is retention-<cutoff>-<n>, so a run repeated for the same cutoff erases nothing twice. \
      Prints one result JSON line per batch, and a line on stderr after each saying how far it got; exits 2 \
      when the config sets no retention.
      """)

  @OptionGroup var service: ServiceOptions

  @Option(help: "Payments erased per transaction (1 to 5000).")
  var batch = ErasePersonalData.defaultLimit

  func validate() throws {
    guard (1...ErasePersonalData.maxLimit).contains(batch) else { throw ValidationError("--batch must be 1 to 5000") }
  }

  func run() throws {
    let responses = StdoutGuard.install()
    let session = OneShotSession(service, backOffice: true)
    guard let days = session.context.config.privacy.retainPersonalDataDays else {
      session.close()
      ServeSettings.fail("\(service.config) sets no privacy.retainPersonalDataDays: nothing is past its retention")
    }
    let cutoff = RFC3339.format(session.context.clock.now() - Int64(days) * 86_400)
    PagedCalls(session: session, method: ErasePersonalData.name, command: "payservice retention").erasing(
      key: { round in "retention-\(cutoff)-\(round)" },
      [("before", .string(cutoff)), ("limit", .number(String(batch)))], pretty: false, to: responses)
  }
}

extension PagedCalls {
  /// erasePersonalData with `selector` under `key(1)`, then `key(2)`, … while an answer says more,
  /// each answer printed as a line of its own.
  func erasing(
    key: (Int) -> String, _ selector: [(String, JSONValue)], pretty: Bool, to responses: Int32
  ) -> Never {
    var round = 1
    var orders = 0
    var others = 0
    let failure = run(
      [("erasureId", .string(key(1)))] + selector,
      next: { result in
        guard result["more"] == .bool(true) else { return nil }
        round += 1
        return [("erasureId", .string(key(round)))] + selector
      },
      take: { result in
        let text = JSONWriter.string(JSONValue.object(result))
        Call.write((pretty ? JSONPrettyPrinter.indent(text) : text) + "\n", to: responses)
        if case .array(let erased)? = result["orders"] { orders += erased.count }
        if case .number(let count)? = result["otherPayments"] { others += Int(count) ?? 0 }
        return "\(orders) orders and \(others) other payments erased"
      })
    if let failure { fail(failure, pretty: pretty, to: responses) }
    session.close()
    Foundation.exit(0)
  }
}
