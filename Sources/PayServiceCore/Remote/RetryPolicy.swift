import Foundation

/// How often, and after how long, a remote service's client sends a request again: at most
/// `maxRetries` times after the first attempt, each time after the server's `Retry-After` if it
/// gave one, else after an exponential backoff (from the lower bound of `backoffSeconds`,
/// doubling, up to its upper bound); no wait is longer than `maxDelaySeconds`.
///
/// Only what may be sent again is: a request under an idempotency key (the service answers it
/// with its first answer), or one that only reads. Which answers and failures those are is the
/// client's to say (`RemoteAttempt`).
public struct RetryPolicy: Sendable, Equatable {
  /// Never negative.
  public let maxRetries: Int
  public let backoffSeconds: ClosedRange<Double>
  public let maxDelaySeconds: Double

  public init(maxRetries: Int, backoffSeconds: ClosedRange<Double>, maxDelaySeconds: Double) {
    self.maxRetries = max(maxRetries, 0)
    self.backoffSeconds = backoffSeconds
    self.maxDelaySeconds = maxDelaySeconds
  }

  /// The seconds to wait before retry number `retry` (1 for the first), given the server's
  /// `Retry-After` in seconds, if it sent one.
  public func delay(beforeRetry retry: Int, retryAfter: Double?) -> Double {
    let doublings = Double(min(max(retry - 1, 0), 62))
    let backoff = retryAfter ?? min(backoffSeconds.lowerBound * pow(2, doublings), backoffSeconds.upperBound)
    let delay = min(backoff, maxDelaySeconds)
    return delay.isFinite && delay > 0 ? delay : 0
  }

  /// Runs `attempt` until it is done or the retries are spent, waiting between attempts as the
  /// policy says; `willRetry` is told each retry's number and wait first.
  public func run<Value, Failure>(
    _ attempt: () async -> RemoteAttempt<Value, Failure>,
    willRetry: (_ retry: Int, _ delaySeconds: Double) -> Void = { _, _ in }
  ) async -> RetryOutcome<Value, Failure> {
    var retries = 0
    while true {
      switch await attempt() {
      case .done(let value):
        return .done(value)
      case .retry(let failure, let after):
        guard retries < maxRetries else { return .exhausted(failure, attempts: retries + 1) }
        retries += 1
        let delay = delay(beforeRetry: retries, retryAfter: after)
        willRetry(retries, delay)
        // At most a day, whatever the settings say: the conversion to nanoseconds cannot overflow.
        if delay > 0 { try? await Task.sleep(for: .milliseconds(Int64(min(delay, 86_400) * 1000))) }
      }
    }
  }

  /// ", after N attempts" when there were several, for the message of a call that ran out of them.
  public static func afterAttempts(_ attempts: Int) -> String {
    attempts > 1 ? ", after \(attempts) attempts" : ""
  }
}

/// What one attempt at a request came to.
public enum RemoteAttempt<Value, Failure> {
  /// The call's outcome: nothing is sent again.
  case done(Value)
  /// Worth sending again: the failure it comes to if it may not be, and the seconds the server
  /// asked to wait (`Retry-After`), if it did.
  case retry(Failure, after: Double?)
}

/// What a call came to after its attempts.
public enum RetryOutcome<Value, Failure> {
  case done(Value)
  /// Each attempt was worth retrying and the retries are spent: the last attempt's failure.
  case exhausted(Failure, attempts: Int)
}

/// The `Retry-After` header (RFC 9110, 10.2.3): `delay-seconds` or an `HTTP-date`.
public enum RetryAfter {
  /// The seconds the header asks to wait from `now` (seconds since 1970): its delay, or the time
  /// until its date (0 for a date past). nil for no header or one that is neither form: a sign or
  /// an exponent make no delay-seconds (a fraction is read, as servers send them). A delay too
  /// long to count is the largest finite number: policies cap it (`RetryPolicy.maxDelaySeconds`).
  public static func seconds(_ header: String?, now: Double) -> Double? {
    guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
    let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    if parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }) {
      guard let seconds = Double(text) else { return nil }
      return seconds.isFinite ? seconds : .greatestFiniteMagnitude
    }
    guard let date = HTTPDate.parse(text) else { return nil }
    return max(Double(date) - now, 0)
  }
}
