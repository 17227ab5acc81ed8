import Foundation
import PayServiceCore
import Synchronization
import Testing

/// `Retry-After` read in both of its forms and nothing else, and the retry loop's bound: at most
/// `maxRetries` more attempts, each after the server's wait or the backoff, never longer than
/// `maxDelaySeconds`.
@Suite("Retry policy")
struct RetryPolicyTests {
  /// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date.
  static let example: Int64 = 784_111_777

  @Test("delay-seconds: a whole number (or a decimal, as servers send them), blanks around it ignored")
  func seconds() {
    let now = Double(Self.example)
    #expect(RetryAfter.seconds("120", now: now) == 120)
    #expect(RetryAfter.seconds(" 7 ", now: now) == 7)
    #expect(RetryAfter.seconds("0", now: now) == 0)
    #expect(RetryAfter.seconds("1.5", now: now) == 1.5)
  }

  @Test("an HTTP date in each of RFC 9110's three forms: the seconds until it, 0 once past")
  func dates() {
    let now = Double(Self.example - 30)
    #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 30)
    #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == 30)
    #expect(RetryAfter.seconds("Sun Nov  6 08:49:37 1994", now: now) == 30)
    #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now + 29.5) == 0.5)
    #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now + 3600) == 0)
  }

  @Test("garbage, another zone, an impossible date and a negative number are no Retry-After")
  func garbage() {
    let now = Double(Self.example)
    for header in [
      nil, "", "  ", "soon", "1e3", "0x10", "+5", "-1", "-0", "1.", ".5", "1.2.3", "5 s", "inf", "nan",
      "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49:37", "Sun, 31 Feb 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Fun, 06 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 94 08:49:37 GMT", "Sun Nov  6 08:49 1994", "Sunday, 06-Nov-1994 08:49:37 GMT",
    ] {
      #expect(RetryAfter.seconds(header, now: now) == nil, "\(String(describing: header))")
    }
  }

  @Test("a huge delay reads as a huge number, which the policy caps at maxDelaySeconds")
  func huge() {
    #expect(RetryAfter.seconds("99999999999999999999", now: 0) == 1e20)
    let endless = RetryAfter.seconds(String(repeating: "9", count: 400), now: 0)
    #expect(endless == .greatestFiniteMagnitude)
    #expect(RetryAfter.seconds("Fri, 31 Dec 9999 23:59:59 GMT", now: 0) == 253_402_300_799)
    let policy = RetryPolicy(maxRetries: 2, backoffSeconds: 1...4, maxDelaySeconds: 10)
    #expect(policy.delay(beforeRetry: 1, retryAfter: endless) == 10)
    #expect(policy.delay(beforeRetry: 1, retryAfter: 1e20) == 10)
  }

  @Test("HTTP dates formatted as IMF-fixdate and read back, the epoch and the days around it included")
  func httpDates() {
    #expect(HTTPDate.format(Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    #expect(HTTPDate.format(-1) == "Wed, 31 Dec 1969 23:59:59 GMT")
    #expect(HTTPDate.format(1_709_164_800) == "Thu, 29 Feb 2024 00:00:00 GMT")
    for seconds: Int64 in [0, -1, Self.example, 1_709_164_800, 1_795_262_400, 253_402_300_799] {
      #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds, "\(seconds)")
    }
    // A leap second is read as the second before it.
    #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT"))
  }

  @Test("an rfc850 two-digit year is the one at most 50 years after now's")
  func twoDigitYears() {
    // 2026-11-21T12:00:00Z.
    let now: Int64 = 1_795_262_400
    func year(_ twoDigits: String) -> String? {
      HTTPDate.parse("Sunday, 01-Jan-\(twoDigits) 00:00:00 GMT", now: now).map { String(RFC3339.format($0).prefix(4)) }
    }
    #expect(year("94") == "1994")
    #expect(year("26") == "2026")
    #expect(year("76") == "2076")
    #expect(year("77") == "1977")
  }

  @Test("the backoff doubles from its lower bound up to its upper bound; Retry-After replaces it; maxDelaySeconds caps both")
  func delays() {
    let policy = RetryPolicy(maxRetries: 10, backoffSeconds: 0.25...8, maxDelaySeconds: 30)
    #expect((1...7).map { policy.delay(beforeRetry: $0, retryAfter: nil) } == [0.25, 0.5, 1, 2, 4, 8, 8])
    #expect(policy.delay(beforeRetry: 1_000_000, retryAfter: nil) == 8)
    #expect(policy.delay(beforeRetry: 1, retryAfter: 3) == 3)
    #expect(policy.delay(beforeRetry: 1, retryAfter: 100) == 30)
    #expect(policy.delay(beforeRetry: 5, retryAfter: 0) == 0)
    let short = RetryPolicy(maxRetries: 1, backoffSeconds: 1...1024, maxDelaySeconds: 0.05)
    #expect(short.delay(beforeRetry: 1, retryAfter: nil) == 0.05)
    let none = RetryPolicy(maxRetries: 1, backoffSeconds: 1...1, maxDelaySeconds: -1)
    #expect(none.delay(beforeRetry: 1, retryAfter: 5) == 0)
  }

  /// Counts the attempts made.
  final class Counter: Sendable {
    private let runs = Mutex(0)

    var count: Int { runs.withLock { $0 } }

    /// The number of this attempt.
    func next() -> Int {
      runs.withLock { runs in
        runs += 1
        return runs
      }
    }
  }

  @Test("an attempt retried each time runs exactly maxRetries + 1 times and gives the last failure")
  func bound() async {
    for maxRetries in [0, 1, 3] {
      let counter = Counter()
      var told: [Int] = []
      let policy = RetryPolicy(maxRetries: maxRetries, backoffSeconds: 0...0, maxDelaySeconds: 0)
      let outcome = await policy.run({ () -> RemoteAttempt<String, String> in .retry("failure \(counter.next())", after: 0) }) {
        retry, delay in
        told.append(retry)
        #expect(delay == 0)
      }
      guard case .exhausted(let failure, let attempts) = outcome else {
        Issue.record("not exhausted: \(outcome)")
        continue
      }
      #expect(attempts == maxRetries + 1)
      #expect(failure == "failure \(maxRetries + 1)")
      #expect(counter.count == maxRetries + 1)
      #expect(told == Array(stride(from: 1, through: maxRetries, by: 1)))
    }
    let negative = RetryPolicy(maxRetries: -5, backoffSeconds: 0...0, maxDelaySeconds: 0)
    let counter = Counter()
    let outcome = await negative.run { () -> RemoteAttempt<String, Int> in .retry(counter.next(), after: nil) }
    guard case .exhausted(1, attempts: 1) = outcome else {
      Issue.record("a negative maxRetries retried: \(outcome)")
      return
    }
    #expect(RetryPolicy.afterAttempts(1) == "")
    #expect(RetryPolicy.afterAttempts(3) == ", after 3 attempts")
  }

  @Test("an attempt that is done stops the loop at once")
  func doneStops() async {
    let counter = Counter()
    let policy = RetryPolicy(maxRetries: 5, backoffSeconds: 0...0, maxDelaySeconds: 0)
    let outcome = await policy.run { () -> RemoteAttempt<Int, String> in
      let run = counter.next()
      return run < 2 ? .retry("again", after: nil) : .done(run)
    }
    guard case .done(2) = outcome else {
      Issue.record("\(outcome)")
      return
    }
    #expect(counter.count == 2)
  }

  /// A service that answers 429 with `Retry-After` first, then 200, and records when it was asked.
  final class RateLimitedService: RemoteTransport {
    let asked = Mutex<[ContinuousClock.Instant]>([])
    let retryAfter: String

    init(retryAfter: String) {
      self.retryAfter = retryAfter
    }

    func send(_ request: RemoteRequest) async -> Result<RemoteResponse, RemoteFailure> {
      let count = asked.withLock { asked in
        asked.append(ContinuousClock.now)
        return asked.count
      }
      if count == 1 { return .success(RemoteResponse(status: 429, headers: [("retry-after", retryAfter)])) }
      return .success(RemoteResponse(status: 200, body: Array("{}".utf8)))
    }

    func shutdown() {}
  }

  /// The wait a header makes, as the loop computed it and as it went by: (computed, waited).
  static func waitFor(retryAfter header: String, maxDelaySeconds: Double) async -> (Double?, Duration?) {
    let service = RateLimitedService(retryAfter: header)
    let policy = RetryPolicy(maxRetries: 2, backoffSeconds: 5...5, maxDelaySeconds: maxDelaySeconds)
    let request = RemoteRequest(method: .GET, url: "https://service.example/resource")
    var computed: Double?
    let outcome = await policy.run({ () -> RemoteAttempt<Int, Int> in
      guard case .success(let response) = await service.send(request) else { return .done(0) }
      return response.status == 429 ? .retry(429, after: response.retryAfter()) : .done(response.status)
    }) { _, delay in computed = delay }
    let asked = service.asked.withLock { $0 }
    guard case .done(200) = outcome, asked.count == 2 else {
      Issue.record("\(outcome) after \(asked.count) requests")
      return (computed, nil)
    }
    return (computed, asked[1] - asked[0])
  }

  // Only the least wait is checked against the clock: a busy machine can only make it longer.
  @Test("Retry-After from the response is waited for, in seconds and as a date, at most maxDelaySeconds")
  func honoursRetryAfter() async throws {
    let (seconds, waitedSeconds) = await Self.waitFor(retryAfter: "1", maxDelaySeconds: 2)
    #expect(seconds == 1)
    #expect(try #require(waitedSeconds) >= .milliseconds(950))
    // A date is to the second: two seconds after this whole second is more than one from now.
    let date = HTTPDate.format(Int64(Date().timeIntervalSince1970) + 2)
    let (untilDate, waitedUntilDate) = await Self.waitFor(retryAfter: date, maxDelaySeconds: 2)
    let computed = try #require(untilDate)
    #expect(computed > 1 && computed <= 2, "\(computed)")
    #expect(try #require(waitedUntilDate) >= .milliseconds(950))
    let (capped, _) = await Self.waitFor(retryAfter: "3600", maxDelaySeconds: 0.1)
    #expect(capped == 0.1)
  }
}
