/// An operation whose call is work at the remote gateway (a charge, a capture, a cancel, a refund):
/// besides being sent, and sent again under its key, its pending entry can be looked up at the
/// gateway without being sent again (`RemoteGateway.lookUp`), which is how the janitor
/// (`resolvePending`) settles work that no answer or report settled.
public protocol GatewayOperation: Operation {
  /// The work `call` asks of the gateway.
  static func work(_ call: Call, context: ServiceContext) -> GatewayWork
  /// What a lookup found, as the call's own reply; nil when it is about another kind of work.
  static func reply(_ found: GatewayFound) -> Reply?
  /// What `reply` says other than "done", for people (no answer and why, a refusal, a decline,
  /// accepted for later); nil when it says "done".
  static func why(_ reply: Reply) -> String?
}

extension GatewayOperation where Reply == GatewayReply<GatewayPayment> {
  public static func reply(_ found: GatewayFound) -> Reply? {
    if case .payment(let reply) = found { reply } else { nil }
  }

  public static func why(_ reply: Reply) -> String? { reply.why }
}

extension GatewayOperation where Reply == GatewayReply<GatewayRefund> {
  public static func reply(_ found: GatewayFound) -> Reply? {
    if case .refund(let reply) = found { reply } else { nil }
  }

  public static func why(_ reply: Reply) -> String? { reply.why }
}

extension GatewayReply {
  /// What the reply says other than "done", for people; nil when it says "done".
  var why: String? {
    switch self {
    case .succeeded: return nil
    case .declined(let decline): return decline.message
    case .refused(let refusal): return refusal.message
    case .unanswered(let reason): return reason
    case .accepted(let reference): return "accepted as \(reference), its outcome not reported yet"
    }
  }
}

/// What the janitor made of one pending entry.
public enum Resolution: Equatable, Sendable {
  /// The gateway showed what the work came to: its answer is kept under the key, as the call's
  /// own answer would have been; `failure` is the answer's failure code when it is one (a
  /// declined charge, a refund the bank returned).
  case settled(failure: String?)
  /// The gateway showed the work was never done: the entry went, and its key is unused again (a
  /// checkout's order failed with its stock back; a capture, cancel or refund may be asked again).
  case released(String)
  /// The lookup gave nothing final (no answer, or the gateway still processing): still pending.
  case pending(String)
  /// The gateway offers no lookup of this work: the merchant checks it where the gateway shows it.
  case toCheck(String)
}

extension OperationRunner {
  /// Settles `entry` from what its gateway shows of its work, without sending its call again: the
  /// janitor's step for one entry. The lookup is made with no transaction open, and its reply is
  /// recorded as the call's would be (`InFlight.settle`): an entry settled meanwhile is left as
  /// it was settled. Recorded work (a Wallet order push, a merchant token's unlinking) is the one
  /// kind sent again: it moves no money, and sending it twice is harmless.
  static func resolve(_ entry: OperationRow, context: ServiceContext) throws -> Resolution {
    // Left pending (the remote service busy, the process gone): sent again, as the sweep would.
    if let kind = kinds.first(where: { $0.kind == entry.kind }), let recorded = kind as? any RecordedOperation.Type {
      guard let resumed = try recorded.resume(entry, now: context.clock.now(), context: context) else {
        return .toCheck(
          "\(entry.kind) entries are not sent again here: this config has no service for them, or the entry is too old")
      }
      resumed.send()
      return try resumed.settleStillPending()
        ? .pending("the remote service did not take it; it is sent again later") : .settled(failure: nil)
    }
    guard let kind = kinds.first(where: { $0.kind == entry.kind }) as? any GatewayOperation.Type else {
      return .toCheck("the journal's \(entry.kind) entries are not work at a gateway: nothing to look up")
    }
    return try kind.resolve(entry, context: context)
  }
}

extension GatewayOperation {
  static func resolve(_ entry: OperationRow, context: ServiceContext) throws -> Resolution {
    let (call, request) = try OperationRunner.call(of: entry, as: Self.self)
    guard let calls = context.gatewayCalls else {
      return .toCheck("this payservice has no remote gateway to look the work up at")
    }
    let work = Self.work(call, context: context)
    guard let found = calls.run({ gateway in await gateway.lookUp(work) }) else {
      return .toCheck(
        "\(calls.gateway.name) offers no lookup of \(work.description): check it in \(calls.gateway.dashboard); "
          + "\(calls.gateway.name)'s report of it settles it here when it arrives")
    }
    guard let reply = Self.reply(found) else {
      throw StoreError.unavailable(reason: "the lookup of \(Self.kind) \(entry.key) found another kind of work")
    }
    let looked = OperationRunner.InFlight<Self>(
      key: entry.key, subject: entry.subject, call: call, request: request, conflict: nil,
      sender: { _ in PendingCall { reply } }, context: context)
    let (result, settledEntry) = try looked.settle()
    switch settledEntry {
    case .settled, .recorded:
      let failure = (result as? any MethodResult)?.failure
      return .settled(failure: failure.map { $0.code ?? $0.status })
    case .released: return .released(Self.why(reply) ?? "\(calls.gateway.name) shows it was never done")
    case .pending: return .pending(Self.why(reply) ?? "\(calls.gateway.name) shows nothing final yet")
    }
  }
}

extension GatewayWork: CustomStringConvertible {
  /// The work as the merchant finds it at the gateway: the references it carries.
  public var description: String {
    switch self {
    case .charge(let charge): return "the payment of order \(charge.orderId) (reference \(charge.orderId))"
    case .capture(let capture): return "the capture \(capture.captureId) of payment \(capture.paymentId)"
    case .cancel(let cancel): return "the cancel \(cancel.cancelId) of payment \(cancel.paymentId)"
    case .refund(let refund): return "the refund \(refund.refundId) of payment \(refund.paymentId)"
    }
  }
}
