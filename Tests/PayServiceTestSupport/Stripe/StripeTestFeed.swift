import Foundation

/// What the test server's ledger tells after the fact, as Stripe does: an Event for every state
/// change (https://docs.stripe.com/api/events/object), a balance transaction for every movement of
/// money (https://docs.stripe.com/api/balance_transactions/object), disputes
/// (https://docs.stripe.com/api/disputes/object), and the list endpoints over them
/// (https://docs.stripe.com/api/pagination).
extension StripeTestLedger {
  /// An Event as made: its JSON text is what Stripe POSTs to a webhook endpoint.
  struct FeedEvent: Sendable {
    var id: String
    var type: String
    var created: Int64
    var json: StripeJSON
    var payload: String
  }

  /// A balance transaction. The test server takes no fees: `fee` is 0 and `net` the amount, and the
  /// funds are `available` at once (`available_on` is `created`).
  struct BalanceTransaction: Sendable {
    var id: String
    var amount: Int64
    var currency: String
    var created: Int64
    var reportingCategory: String
    var source: String
    var type: String
  }

  struct Dispute: Sendable {
    var id: String
    var amount: Int64
    var charge: String
    var paymentIntent: String
    var currency: String
    var created: Int64
    var reason: String
    var status: String
    /// An inquiry (`warning_…` statuses): no funds are withdrawn.
    var inquiry: Bool
    var balanceTransactions: [String] = []
    var dueBy: Int64
  }

  /// The reasons Stripe's Dispute object has.
  static let disputeReasons = [
    "bank_cannot_process", "check_returned", "credit_not_processed", "customer_initiated", "debit_not_authorized",
    "duplicate", "fraudulent", "general", "incorrect_account_details", "insufficient_funds", "product_not_received",
    "product_unacceptable", "subscription_canceled", "unrecognized",
  ]

  // MARK: - Events and balance transactions

  /// Appends an Event of `type` about `object` (as `GET` shows it now), with `previous` as
  /// `data.previous_attributes` (for `*.updated` events).
  mutating func emit(_ type: String, _ object: StripeJSON, previous: StripeJSON? = nil) {
    let id = nextID("evt")
    let created = now
    var data: [(String, StripeJSON)] = [("object", object)]
    if let previous { data.append(("previous_attributes", previous)) }
    let json = StripeJSON.object([
      ("id", .string(id)),
      ("object", .string("event")),
      ("api_version", .string(StripeServerCore.defaultStripeVersion)),
      ("created", .int(created)),
      ("data", .object(data)),
      ("livemode", .bool(false)),
      ("pending_webhooks", .int(1)),
      (
        "request",
        .object([("id", .optional(request?.id)), ("idempotency_key", .optional(request?.idempotencyKey))])
      ),
      ("type", .string(type)),
    ])
    eventIndex[id] = events.count
    events.append(FeedEvent(id: id, type: type, created: created, json: json, payload: json.rendered))
  }

  /// Records a movement of money and answers its id.
  mutating func addBalanceTransaction(
    type: String, reportingCategory: String, amount: Int64, currency: String, source: String
  ) -> String {
    let transaction = BalanceTransaction(
      id: nextID("txn"), amount: amount, currency: currency, created: now, reportingCategory: reportingCategory,
      source: source, type: type)
    balanceTransactions[transaction.id] = transaction
    balanceTransactionOrder.append(transaction.id)
    return transaction.id
  }

  // MARK: - Refunds

  /// Stores a new refund (its status set) on its charge: a refund that moves money (every status but
  /// `canceled` and `failed`) raises the charge's `amount_refunded` and gets its `refund` balance
  /// transaction. Events `refund.created`, and `charge.refunded` when money moved.
  mutating func record(_ refund: inout Refund, on charge: inout Charge) {
    let movesMoney = refund.status != "canceled" && refund.status != "failed"
    if movesMoney {
      charge.amountRefunded += refund.amount
      refund.balanceTransaction = addBalanceTransaction(
        type: "refund", reportingCategory: "refund", amount: -refund.amount, currency: refund.currency,
        source: refund.id)
    }
    charges[charge.id] = charge
    refunds[refund.id] = refund
    refundOrder.append(refund.id)
    emit("refund.created", render(refund))
    if movesMoney { emit("charge.refunded", render(charge)) }
  }

  /// Whether a dispute that withdrew funds (not an inquiry) is on the charge: Stripe refuses its refunds.
  func isChargedBack(_ chargeID: String) -> Bool {
    disputes.values.contains { $0.charge == chargeID && !$0.inquiry }
  }

  /// A refund made in the Dashboard: `succeeded` at once, no metadata, no reason.
  mutating func refundFromDashboard(_ intentID: String, amount: Int64?) -> String? {
    guard let intent = paymentIntents[intentID], intent.status == "succeeded", let chargeID = intent.latestCharge,
      var charge = charges[chargeID], charge.captured, !isChargedBack(chargeID)
    else { return nil }
    let refundable = charge.amountCaptured - charge.amountRefunded
    let amount = amount ?? refundable
    guard amount >= 1, amount <= refundable else { return nil }
    var refund = Refund(
      id: nextID("re"), amount: amount, currency: charge.currency, charge: chargeID, paymentIntent: intentID,
      status: "succeeded", reason: nil, metadata: [], created: now)
    record(&refund, on: &charge)
    return refund.id
  }

  /// A refund that had moved money fails: its money comes back (`refund_failure` balance
  /// transaction, the charge's `amount_refunded` down). Events `refund.failed`, `refund.updated`
  /// and `charge.refund.updated` (both with the old `status` as `previous_attributes`).
  mutating func failRefund(_ id: String, reason: String) -> Bool {
    guard var refund = refunds[id], refund.status != "failed", refund.status != "canceled",
      var charge = charges[refund.charge]
    else { return false }
    let previous = StripeJSON.object([("status", .optional(refund.status))])
    refund.status = "failed"
    refund.failureReason = reason
    charge.amountRefunded -= refund.amount
    if refund.balanceTransaction != nil {
      refund.failureBalanceTransaction = addBalanceTransaction(
        type: "refund_failure", reportingCategory: "refund_failure", amount: refund.amount, currency: refund.currency,
        source: refund.id)
    }
    refunds[id] = refund
    charges[charge.id] = charge
    emit("refund.failed", render(refund))
    emit("refund.updated", render(refund), previous: previous)
    emit("charge.refund.updated", render(refund), previous: previous)
    return true
  }

  /// A `pending` (or null-status) refund succeeds. Events `refund.updated` and `charge.refund.updated`.
  mutating func succeedRefund(_ id: String) {
    guard var refund = refunds[id], refund.status != "succeeded" else { return }
    let previous = StripeJSON.object([("status", .optional(refund.status))])
    refund.status = "succeeded"
    refunds[id] = refund
    emit("refund.updated", render(refund), previous: previous)
    emit("charge.refund.updated", render(refund), previous: previous)
  }

  // MARK: - Disputes

  /// Opens a dispute on the PaymentIntent's captured charge (see `StripeTestServer.openDispute`).
  mutating func openDispute(_ intentID: String, reason: String, amount: Int64?, inquiry: Bool) -> String? {
    guard Self.disputeReasons.contains(reason), let intent = paymentIntents[intentID], intent.status == "succeeded",
      let chargeID = intent.latestCharge, var charge = charges[chargeID], charge.captured,
      !disputes.values.contains(where: { $0.charge == chargeID })
    else { return nil }
    let disputable = charge.amountCaptured - charge.amountRefunded
    let amount = amount ?? disputable
    guard amount >= 1, amount <= disputable else { return nil }
    let created = now
    var dispute = Dispute(
      id: nextID("dp"), amount: amount, charge: chargeID, paymentIntent: intentID, currency: charge.currency,
      created: created, reason: reason, status: inquiry ? "warning_needs_response" : "needs_response",
      inquiry: inquiry, dueBy: ((created + 7 * 86_400) / 86_400 + 1) * 86_400 - 1)
    if !inquiry {
      dispute.balanceTransactions.append(
        addBalanceTransaction(
          type: "adjustment", reportingCategory: "dispute", amount: -amount, currency: dispute.currency,
          source: dispute.id))
    }
    charge.disputed = true
    charges[chargeID] = charge
    disputes[dispute.id] = dispute
    disputeOrder.append(dispute.id)
    emit("charge.dispute.created", render(dispute))
    if !inquiry { emit("charge.dispute.funds_withdrawn", render(dispute)) }
    return dispute.id
  }

  static let openDisputeStatuses = [
    "warning_needs_response", "warning_under_review", "needs_response", "under_review",
  ]

  /// Moves an open dispute to another open status of its kind (`under_review` for a dispute,
  /// `warning_under_review` for an inquiry, or back to `…needs_response`). Event
  /// `charge.dispute.updated` with the old `status` as `previous_attributes`.
  mutating func updateDispute(_ id: String, status: String) -> Bool {
    guard var dispute = disputes[id], Self.openDisputeStatuses.contains(dispute.status),
      Self.openDisputeStatuses.contains(status), status.hasPrefix("warning_") == dispute.inquiry,
      status != dispute.status
    else { return false }
    let previous = StripeJSON.object([("status", .string(dispute.status))])
    dispute.status = status
    disputes[id] = dispute
    emit("charge.dispute.updated", render(dispute), previous: previous)
    return true
  }

  /// Closes an open dispute: `won` (its funds reinstated) or `lost`; an inquiry becomes
  /// `warning_closed` either way. Events `charge.dispute.closed`, then for a won dispute
  /// `charge.dispute.funds_reinstated`.
  mutating func closeDispute(_ id: String, won: Bool) -> Bool {
    guard var dispute = disputes[id], Self.openDisputeStatuses.contains(dispute.status) else { return false }
    dispute.status = dispute.inquiry ? "warning_closed" : won ? "won" : "lost"
    let reinstates = won && !dispute.inquiry
    if reinstates {
      dispute.balanceTransactions.append(
        addBalanceTransaction(
          type: "adjustment", reportingCategory: "dispute_reversal", amount: dispute.amount, currency: dispute.currency,
          source: dispute.id))
    }
    disputes[id] = dispute
    emit("charge.dispute.closed", render(dispute))
    if reinstates { emit("charge.dispute.funds_reinstated", render(dispute)) }
    return true
  }

  // MARK: - Retrieval

  func retrieveEvent(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let index = eventIndex[id] else { return .failure(.resourceMissing("No such event: '\(id)'", param: "id")) }
    return .success(events[index].json)
  }

  func retrieveDispute(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let dispute = disputes[id] else {
      return .failure(.resourceMissing("No such dispute: '\(id)'", param: "dispute"))
    }
    return .success(render(dispute))
  }

  func retrieveBalanceTransaction(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let transaction = balanceTransactions[id] else {
      return .failure(.resourceMissing("No such balance transaction: '\(id)'", param: "id"))
    }
    return .success(render(transaction))
  }

  // MARK: - Lists (https://docs.stripe.com/api/pagination)

  /// The parameters every list takes.
  static let listParameters: Set<String> = ["created", "ending_before", "expand", "limit", "starting_after"]

  /// Which list a `GET` asks for.
  enum ListKind: Sendable, Equatable {
    case paymentIntents, refunds, disputes, events, balanceTransactions, setupIntents

    var url: String {
      switch self {
      case .setupIntents: "/v1/setup_intents"
      case .paymentIntents: "/v1/payment_intents"
      case .refunds: "/v1/refunds"
      case .disputes: "/v1/disputes"
      case .events: "/v1/events"
      case .balanceTransactions: "/v1/balance_transactions"
      }
    }

    /// The noun of its `resource_missing` message ("No such refund: 're_…'").
    var noun: String {
      switch self {
      case .paymentIntents: "payment_intent"
      case .setupIntents: "setupintent"
      case .refunds: "refund"
      case .disputes: "dispute"
      case .events: "event"
      case .balanceTransactions: "balance transaction"
      }
    }

    var parameters: Set<String> {
      switch self {
      case .paymentIntents: StripeTestLedger.listParameters.union(["customer"])
      case .setupIntents: StripeTestLedger.listParameters.union(["attach_to_self", "customer", "payment_method"])
      case .refunds, .disputes: StripeTestLedger.listParameters.union(["charge", "payment_intent"])
      case .events: StripeTestLedger.listParameters.union(["delivery_success", "type", "types"])
      case .balanceTransactions: StripeTestLedger.listParameters.union(["currency", "source", "type"])
      }
    }
  }

  static let createdBounds = ["gt", "gte", "lt", "lte"]

  /// Before anything is looked up: unknown parameters, `limit` out of 1…100, `created` bounds that
  /// are not integers, both cursors.
  static func validateList(_ kind: ListKind, _ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: kind.parameters) { return error }
    if let text = form["limit"] {
      guard let limit = Int64(text) else {
        return .invalidRequest("Invalid integer: \(text)", param: "limit", code: "parameter_invalid_integer")
      }
      if limit < 1 {
        return .invalidRequest(
          "This value must be greater than or equal to 1.", param: "limit", code: "parameter_invalid_integer")
      }
      if limit > 100 {
        return .invalidRequest(
          "This value must be less than or equal to 100.", param: "limit", code: "parameter_invalid_integer")
      }
    }
    for pair in form.pairs where pair.name == "created" || pair.name.hasPrefix("created[") {
      if pair.name != "created" {
        let bound = String(pair.name.dropFirst("created[".count).dropLast())
        guard pair.name.hasSuffix("]"), createdBounds.contains(bound) else {
          return .invalidRequest(
            "Received unknown parameter: \(pair.name)", param: pair.name, code: "parameter_unknown")
        }
      }
      guard Int64(pair.value) != nil else {
        return .invalidRequest(
          "Invalid integer: \(pair.value)", param: pair.name, code: "parameter_invalid_integer")
      }
    }
    if form.contains("starting_after") && form.contains("ending_before") {
      return .invalidRequest(
        "You may only specify one of these parameters: ending_before, starting_after.", param: "ending_before")
    }
    if kind == .events && form.contains("type") && !form.array("types").isEmpty {
      return .invalidRequest("You may only specify one of these parameters: type, types.", param: "types")
    }
    return nil
  }

  /// Whether an event type matches a `type` filter (`*` is a wildcard: `charge.dispute.*`).
  static func eventType(_ type: String, matches pattern: String) -> Bool {
    guard pattern.contains("*") else { return type == pattern }
    let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
    var rest = Substring(type)
    for (index, part) in parts.enumerated() {
      if index == 0 {
        guard rest.hasPrefix(part) else { return false }
        rest = rest.dropFirst(part.count)
      } else if index == parts.count - 1 {
        return rest.hasSuffix(part)
      } else {
        guard let range = rest.range(of: part) else { return false }
        rest = rest[range.upperBound...]
      }
    }
    return rest.isEmpty
  }

  /// A list answer: the objects of `kind` that pass the filters, newest first (for the same
  /// `created`, the later-made first), paged by `limit` and a cursor.
  func list(_ kind: ListKind, _ form: StripeForm) -> Result<StripeJSON, StripeAPIError> {
    // Every object of the kind in creation order: its ids, and each one's `created`.
    let ids: [String]
    let created: (String) -> Int64
    switch kind {
    case .paymentIntents: (ids, created) = (paymentIntentOrder, { self.paymentIntents[$0]!.created })
    case .setupIntents: (ids, created) = (setupIntentOrder, { self.setupIntents[$0]!.created })
    case .refunds: (ids, created) = (refundOrder, { self.refunds[$0]!.created })
    case .disputes: (ids, created) = (disputeOrder, { self.disputes[$0]!.created })
    case .events: (ids, created) = (events.map(\.id), { self.events[self.eventIndex[$0]!].created })
    case .balanceTransactions: (ids, created) = (balanceTransactionOrder, { self.balanceTransactions[$0]!.created })
    }
    // Sorted once per kind while no object is added: a reconciliation pages through many thousands.
    let (ordered, rank) = listOrder.sorted(kind, count: ids.count, last: ids.last) {
      let ordered = ids.enumerated().map { (offset: $0.offset, id: $0.element, created: created($0.element)) }.sorted {
        lhs, rhs in lhs.created != rhs.created ? lhs.created > rhs.created : lhs.offset > rhs.offset
      }.map { (id: $0.id, created: $0.created) }
      var rank: [String: Int] = [:]
      for (position, entry) in ordered.enumerated() { rank[entry.id] = position }
      return (ordered, rank)
    }

    var cursor: (rank: Int, after: Bool)?
    for (name, after) in [("starting_after", true), ("ending_before", false)] {
      guard let id = form[name] else { continue }
      guard let position = rank[id] else {
        return .failure(.resourceMissing("No such \(kind.noun): '\(id)'", param: name, status: 400))
      }
      cursor = (position, after)
    }

    let bounds = form.hash("created")
    let exact = form["created"].flatMap { Int64($0) }
    let limit = form["limit"].flatMap { Int($0) } ?? 10
    func matches(_ entry: (id: String, created: Int64)) -> Bool {
      if let exact, entry.created != exact { return false }
      for bound in bounds {
        let value = Int64(bound.value)!
        switch bound.key {
        case "gt": if !(entry.created > value) { return false }
        case "gte": if !(entry.created >= value) { return false }
        case "lt": if !(entry.created < value) { return false }
        default: if !(entry.created <= value) { return false }
        }
      }
      return self.passes(kind, entry.id, form)
    }
    let page: [(id: String, created: Int64)]
    let more: Bool
    if let cursor, !cursor.after {
      // ending_before: the page just before the cursor.
      let matching = ordered[..<cursor.rank].filter(matches)
      page = Array(matching.suffix(limit))
      more = matching.count > page.count
    } else {
      // From the top, or after starting_after: only as far as one past the page.
      var found: [(id: String, created: Int64)] = []
      for entry in ordered[(cursor.map { $0.rank + 1 } ?? 0)...] where matches(entry) {
        found.append(entry)
        if found.count > limit { break }
      }
      page = Array(found.prefix(limit))
      more = found.count > limit
    }
    let expandCharge = form.array("expand").contains("data.latest_charge")
    let data: [StripeJSON] = page.map { entry in
      switch kind {
      case .paymentIntents: render(paymentIntents[entry.id]!, expandCharge: expandCharge)
      case .setupIntents: render(setupIntents[entry.id]!)
      case .refunds: render(refunds[entry.id]!)
      case .disputes: render(disputes[entry.id]!)
      case .events: events[eventIndex[entry.id]!].json
      case .balanceTransactions: render(balanceTransactions[entry.id]!)
      }
    }
    return .success(
      .object([
        ("object", .string("list")),
        ("data", .array(data)),
        ("has_more", .bool(more)),
        ("url", .string(kind.url)),
      ]))
  }

  /// The filters of each list besides `created`.
  func passes(_ kind: ListKind, _ id: String, _ form: StripeForm) -> Bool {
    switch kind {
    case .paymentIntents:
      if let customer = form["customer"], customer != paymentIntents[id]!.customer { return false }
      return true
    case .setupIntents:
      let intent = setupIntents[id]!
      if let customer = form["customer"], customer != intent.customer { return false }
      if let method = form["payment_method"], method != intent.paymentMethod { return false }
      return true
    case .refunds:
      let refund = refunds[id]!
      if let charge = form["charge"], charge != refund.charge { return false }
      if let intent = form["payment_intent"], intent != refund.paymentIntent { return false }
      return true
    case .disputes:
      let dispute = disputes[id]!
      if let charge = form["charge"], charge != dispute.charge { return false }
      if let intent = form["payment_intent"], intent != dispute.paymentIntent { return false }
      return true
    case .events:
      let type = events[eventIndex[id]!].type
      if let pattern = form["type"], !Self.eventType(type, matches: pattern) { return false }
      let types = form.array("types")
      if !types.isEmpty, !types.contains(where: { Self.eventType(type, matches: $0) }) { return false }
      // Every event's webhook is taken as delivered here once made: `delivery_success=false` matches none.
      if form["delivery_success"] == "false" { return false }
      return true
    case .balanceTransactions:
      let transaction = balanceTransactions[id]!
      if let type = form["type"], type != transaction.type { return false }
      if let source = form["source"], source != transaction.source { return false }
      if let currency = form["currency"], currency.lowercased() != transaction.currency { return false }
      return true
    }
  }

  // MARK: - Rendering

  func render(_ transaction: BalanceTransaction) -> StripeJSON {
    .object([
      ("id", .string(transaction.id)),
      ("object", .string("balance_transaction")),
      ("amount", .int(transaction.amount)),
      ("available_on", .int(transaction.created)),
      ("created", .int(transaction.created)),
      ("currency", .string(transaction.currency)),
      ("description", .null),
      ("exchange_rate", .null),
      ("fee", .int(0)),
      ("fee_details", .array([])),
      ("net", .int(transaction.amount)),
      ("reporting_category", .string(transaction.reportingCategory)),
      ("source", .string(transaction.source)),
      ("status", .string("available")),
      ("type", .string(transaction.type)),
    ])
  }

  /// The fields of a Dispute's `evidence`, all empty until evidence is submitted.
  static let evidenceFields = [
    "access_activity_log", "billing_address", "cancellation_policy", "cancellation_policy_disclosure",
    "cancellation_rebuttal", "customer_communication", "customer_email_address", "customer_name",
    "customer_purchase_ip", "customer_signature", "duplicate_charge_documentation", "duplicate_charge_explanation",
    "duplicate_charge_id", "product_description", "receipt", "refund_policy", "refund_policy_disclosure",
    "refund_refusal_explanation", "service_date", "service_documentation", "shipping_address", "shipping_carrier",
    "shipping_date", "shipping_documentation", "shipping_tracking_number", "uncategorized_file", "uncategorized_text",
  ]

  /// A Dispute as Stripe shows it: `balance_transactions` are the full objects (the withdrawal, then
  /// a reinstatement); an inquiry's charge can still be refunded, a dispute's cannot.
  func render(_ dispute: Dispute) -> StripeJSON {
    .object([
      ("id", .string(dispute.id)),
      ("object", .string("dispute")),
      ("amount", .int(dispute.amount)),
      ("balance_transactions", .array(dispute.balanceTransactions.map { render(balanceTransactions[$0]!) })),
      ("charge", .string(dispute.charge)),
      ("created", .int(dispute.created)),
      ("currency", .string(dispute.currency)),
      ("evidence", .object(Self.evidenceFields.map { ($0, StripeJSON.null) })),
      (
        "evidence_details",
        .object([
          ("due_by", .int(dispute.dueBy)),
          ("has_evidence", .bool(false)),
          ("past_due", .bool(false)),
          ("submission_count", .int(0)),
        ])
      ),
      ("is_charge_refundable", .bool(dispute.inquiry)),
      ("livemode", .bool(false)),
      ("metadata", .object([])),
      ("payment_intent", .string(dispute.paymentIntent)),
      ("reason", .string(dispute.reason)),
      ("status", .string(dispute.status)),
    ])
  }
}
