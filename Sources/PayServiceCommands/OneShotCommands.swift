import ArgumentParser
import Foundation
import PayServiceCore

/// What a one-shot command answers with: the config, store and clock of its options, opened as
/// `serve` opens them (an invalid config or a store that cannot open exits 2), and a handler that
/// answers requests the way a served line is answered.
struct OneShotSession {
  let handler: RequestHandler
  private let log: RequestLog
  private let clients: RemoteClients

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
    clients = RemoteClients(for: loaded, clock: clock)
    handler = RequestHandler(
      context: clients.context(config: loaded, storeSource: StoreSource(store), clock: clock, backOffice: backOffice),
      methods: .payservice(backOffice: backOffice), log: log)
  }

  var context: ServiceContext { handler.context }

  /// One request's outcome, nothing printed; the calls it recorded (Wallet order pushes, merchant
  /// token unlinks) sent once it is durable (if they cannot be, they stay pending for the next start).
  func call(method: String, paramsText: String?, pretty: Bool) -> OneShotCall.Outcome {
    let outcome = OneShotCall.run(method: method, paramsText: paramsText, handler: handler, pretty: pretty)
    for message in context.walletDeviceMessages.take() { log.warning("a Wallet device reports: \(message)") }
    do {
      try context.recordedCalls.sendRecorded(context: context)
    } catch {
      log.warning("recorded calls not sent now (\(error)); they stay pending, and the next start sends them")
    }
    return outcome
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
    clients.shutdown()
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
        Calls reconcileStripe --limit objects at a time, each call going on from the cursor of the one \
        before, until Stripe lists nothing more. Prints each call's result as a line of JSON (what it \
        changed, order by order), and after each a line on stderr saying how far the run got. Exits 0 when \
        every list was read; 1 after a failed result (Stripe could not be read: what earlier calls took in \
        stays); an invalid config or store exits 2. Running it again changes nothing. For cron: run it daily \
        with --since a few days back.
        """)

    @Option(help: "Take in what Stripe made at or after this RFC 3339 time.")
    var since: String

    @Option(help: "Objects read per reconcileStripe call (1 to 2000).")
    var limit = ReconcileStripe.defaultLimit

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func validate() throws {
      guard (1...ReconcileStripe.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to \(ReconcileStripe.maxLimit)") }
    }

    func run() throws {
      let responses = StdoutGuard.install()
      var failed = false
      var listed = 0
      var changes = 0
      PagedCalls(
        session: OneShotSession(service, backOffice: true), method: ReconcileStripe.name,
        command: "payservice stripe reconcile"
      ).run(
        [("since", .string(since)), ("limit", .number(String(limit)))], pretty: pretty, to: responses,
        next: PagedCalls.cursor(limit: limit),
        take: { result in
          guard result["status"] == .string("succeeded") else {
            failed = true
            return "Stripe not read"
          }
          if case .object(let counts)? = result["listed"] {
            for case .number(let count) in counts.members.map(\.value) { listed += Int(count) ?? 0 }
          }
          if case .array(let effects)? = result["effects"] {
            for case .object(let effect) in effects {
              if case .number(let count)? = effect["count"] { changes += Int(count) ?? 0 }
            }
          }
          return "\(PagedCalls.count(listed, "object")) listed, \(PagedCalls.count(changes, "change"))"
        })
      Foundation.exit(failed ? 1 : 0)
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
        Calls runBilling --limit payments at a time, each call going on from the cursor of the one before, \
        until nothing more is due. Prints each call's result as a line of JSON (its payments, counts and money \
        charged), and after each a line on stderr saying how far the run got. Exits 0 when every payment due \
        went through (or none was due), 1 when any failed, is pending at the gateway or was skipped (the \
        results list them), 2 for an invalid config or store. Runs \
        that overlap (two hosts, a slow cron) or a run killed and started again charge each payment once. \
        Runs meant to go at once share the agreements out with --shard: 0/4, 1/4, 2/4 and 3/4 each take a \
        quarter, and never meet on an agreement. For cron: every hour, or a systemd timer with Persistent=true.
        """)

    @Option(help: "Charge payments due at or before this RFC 3339 time (default and latest: now).")
    var until: String?

    @Option(help: "Payments per runBilling call (1 to 2000).")
    var limit = RunBilling.defaultLimit

    @Option(help: "Only this part of the agreements, INDEX/PARTS (0/4 to 3/4; at most 16 parts), for runs at once.")
    var shard: String?

    /// `--shard` read: INDEX/PARTS.
    static func shard(_ text: String) -> AgreementShard? {
      let parts = text.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count == 2, let index = Int(parts[0]), let of = Int(parts[1]) else { return nil }
      return AgreementShard(checkedIndex: index, of: of)
    }

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func validate() throws {
      guard (1...RunBilling.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to \(RunBilling.maxLimit)") }
      if let shard, Self.shard(shard) == nil {
        throw ValidationError(
          "--shard must be INDEX/PARTS, PARTS 1 to \(AgreementShard.maxParts) and INDEX 0 to PARTS - 1 (such as 0/4), got \(shard)")
      }
    }

    func run() throws {
      let responses = StdoutGuard.install()
      let counted = ["succeeded", "failed", "pending", "skipped", "ended"]
      var counts = Dictionary(uniqueKeysWithValues: counted.map { ($0, 0) })
      var first: [(String, JSONValue)] = [("limit", .number(String(limit)))]
      if let until { first.append(("until", .string(until))) }
      if let part = shard.flatMap(Self.shard) {
        first.append(
          ("shard", .object(JSONObject([("index", .number(String(part.index))), ("of", .number(String(part.of)))]))))
      }
      PagedCalls(
        session: OneShotSession(service, backOffice: true), method: RunBilling.name, command: "payservice billing run"
      ).run(
        first, pretty: pretty, to: responses,
        next: PagedCalls.cursor(limit: limit),
        take: { result in
          for name in counted {
            if case .number(let count)? = result[name] { counts[name, default: 0] += Int(count) ?? 0 }
          }
          let made = counted.map { counts[$0] ?? 0 }.reduce(0, +)
          return "\(PagedCalls.count(made, "payment")): " + counted.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        })
      let complete = ["failed", "pending", "skipped"].allSatisfy { (counts[$0] ?? 0) == 0 }
      Foundation.exit(complete ? 0 : 1)
    }
  }
}

/// `payservice pending resolve`: the janitor, for cron or a systemd timer.
struct PendingCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "pending",
    abstract: "Work pending at the gateway (the back office's resolvePending).",
    subcommands: [Resolve.self])

  struct Resolve: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Settle work pending at the gateway for longer than a threshold, by looking it up there (resolvePending).",
      discussion: """
        Calls resolvePending --limit entries at a time, each call going on from the cursor of the one before, \
        until every charge, capture, cancel and refund pending for at least --older-than minutes was looked up at \
        the gateway. Nothing is ever sent to the gateway again: each is settled as the gateway shows it, released \
        when the gateway shows it was never done, left pending when the gateway did not answer, or listed to \
        check when the gateway offers no lookup (Adyen: its Customer Area). Prints each call's result as a line \
        of JSON and after each a line on stderr saying how far the run got. Exits 0 when nothing is left pending \
        or to check, 1 otherwise (the results list them), 2 for an invalid config or store. For cron: every hour.
        """)

    @Option(help: "Look up work pending for at least this many minutes (\(ResolvePending.minutes.lowerBound) to \(ResolvePending.minutes.upperBound)).")
    var olderThan = ResolvePending.defaultMinutes

    @Option(help: "Entries per resolvePending call (1 to \(ResolvePending.maxLimit)).")
    var limit = ResolvePending.defaultLimit

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func validate() throws {
      guard ResolvePending.minutes.contains(olderThan) else {
        throw ValidationError(
          "--older-than must be \(ResolvePending.minutes.lowerBound) to \(ResolvePending.minutes.upperBound) minutes")
      }
      guard (1...ResolvePending.maxLimit).contains(limit) else {
        throw ValidationError("--limit must be 1 to \(ResolvePending.maxLimit)")
      }
    }

    func run() throws {
      let responses = StdoutGuard.install()
      let counted = ["settled", "released", "pending", "toCheck"]
      var counts = Dictionary(uniqueKeysWithValues: counted.map { ($0, 0) })
      PagedCalls(
        session: OneShotSession(service, backOffice: true), method: ResolvePending.name,
        command: "payservice pending resolve"
      ).run(
        [("olderThanMinutes", .number(String(olderThan))), ("limit", .number(String(limit)))], pretty: pretty,
        to: responses, next: PagedCalls.cursor(limit: limit),
        take: { result in
          for name in counted {
            if case .number(let count)? = result[name] { counts[name, default: 0] += Int(count) ?? 0 }
          }
          let looked = counted.map { counts[$0] ?? 0 }.reduce(0, +)
          return "\(looked) \(looked == 1 ? "entry" : "entries") looked up: "
            + counted.map { "\(counts[$0] ?? 0) \($0 == "toCheck" ? "to check" : $0)" }.joined(separator: ", ")
        })
      Foundation.exit((counts["pending"] ?? 0) + (counts["toCheck"] ?? 0) == 0 ? 0 : 1)
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
  /// erasePersonalData with `selector` under `key(1)`, then `key(2)`, … while an answer says more.
  func erasing(
    key: (Int) -> String, _ selector: [(String, JSONValue)], pretty: Bool, to responses: Int32
  ) -> Never {
    var round = 1
    var orders = 0
    var others = 0
    run(
      [("erasureId", .string(key(1)))] + selector, pretty: pretty, to: responses,
      next: { result in
        guard result["more"] == .bool(true) else { return nil }
        round += 1
        return [("erasureId", .string(key(round)))] + selector
      },
      take: { result in
        if case .array(let erased)? = result["orders"] { orders += erased.count }
        if case .number(let count)? = result["otherPayments"] { others += Int(count) ?? 0 }
        return "\(PagedCalls.count(orders, "order")) and \(PagedCalls.count(others, "other payment")) erased"
      })
    Foundation.exit(0)
  }
}
