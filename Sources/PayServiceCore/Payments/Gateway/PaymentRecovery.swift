/// Resolves the payment attempts a remote gateway's answer never reached (a timeout, a reset, a
/// crash or kill -9 between the two transactions of processOrder): each is sent again exactly as
/// before, under the same idempotency key, so the gateway answers with what it did the first time
/// (or does it now, once, if the first call never arrived), and the answer is recorded.
public enum PaymentRecovery {
  /// Stripe prunes idempotency keys once they are at least 24 hours old; after that the same call
  /// could charge again. An attempt older than this is never sent again automatically.
  public static let maxResendAgeSeconds: Int64 = 23 * 3600

  public struct Sweep: Equatable, Sendable {
    /// Attempts whose answer is now recorded (an order, or a final failure).
    public var resolved = 0
    /// Attempts still pending (no answer again, or too old to send).
    public var pending = 0

    public init(resolved: Int = 0, pending: Int = 0) {
      self.resolved = resolved
      self.pending = pending
    }
  }

  /// Sends every pending attempt again, up to the gateway's concurrency at once, and records the
  /// answers; for the start-up of a process with a remote gateway.
  public static func sweep(context: ServiceContext) throws -> Sweep {
    guard let calls = context.gatewayCalls else { return Sweep() }
    var sweep = Sweep()
    let now = context.clock.now()
    let attempts = try context.store.paymentAttempts()
    var index = 0
    while index < attempts.count {
      let batch = attempts[index..<min(index + calls.maxConcurrent, attempts.count)]
      index = batch.endIndex
      let started = batch.map { attempt -> (PaymentAttemptRow, PendingCall?) in
        (attempt, tooOld(attempt, now: now) ? nil : calls.charge(attempt.charge))
      }
      for (attempt, call) in started {
        guard let call else {
          sweep.pending += 1
          continue
        }
        let reply = call.wait()
        _ = try ProcessOrder.settle(orderId: attempt.orderId, token: attempt.token, reply: reply, context: context)
        if reply.leavesPending { sweep.pending += 1 } else { sweep.resolved += 1 }
      }
    }
    return sweep
  }

  static func tooOld(_ attempt: PaymentAttemptRow, now: Int64) -> Bool {
    guard let created = RFC3339.parse(attempt.createdAt) else { return true }
    return now - created > maxResendAgeSeconds
  }
}
