import Foundation
import PayServiceCore

/// A back-office method over many objects, one bounded call at a time: a one-shot calls it again
/// with what each answer says to go on with until an answer says nothing more, tells stderr after
/// each call how far it got, and prints one result at the end. No answer, and nothing printed,
/// grows with the number of objects.
struct PagedCalls {
  let session: OneShotSession
  let method: String
  /// How progress lines start: the command as typed (`payservice billing run`).
  let command: String

  /// Calls `method` with `first`, then with what `next` makes of each answer until it gives nil,
  /// handing each answer to `take`, which says in a few words how far the run got. A call
  /// answered with an error ends the run: its outcome is returned (nil when every call answered).
  func run(
    _ first: [(String, JSONValue)], next: (JSONObject) -> [(String, JSONValue)]?,
    take: (JSONObject) -> String
  ) -> OneShotCall.Outcome? {
    let started = ContinuousClock.now
    var params = first
    var calls = 0
    while true {
      let outcome = session.call(method: method, paramsText: OneShotSession.params(params), pretty: false)
      guard outcome.exitCode == 0, case .object(let result)? = try? JSONParser.parse(outcome.stdout) else {
        return outcome
      }
      calls += 1
      let progress = take(result)
      let following = next(result)
      let elapsed = ContinuousClock.now - started
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      Call.write(
        "\(command): \(calls) call\(calls == 1 ? "" : "s"), \(progress); \(String(format: "%.1f", seconds)) s; "
          + (following == nil ? "done\n" : "going on\n"), to: STDERR_FILENO)
      guard let following else { return nil }
      params = following
    }
  }

  /// Prints a failed call's error as `payservice call` does, ends the session and exits as it does.
  func fail(_ outcome: OneShotCall.Outcome, pretty: Bool, to responses: Int32) -> Never {
    session.close()
    Call.write(pretty ? JSONPrettyPrinter.indent(String(outcome.stdout.dropLast())) + "\n" : outcome.stdout, to: responses)
    Call.write(outcome.stderr, to: STDERR_FILENO)
    Foundation.exit(outcome.exitCode)
  }

  /// Ends the session, prints what the run did as one JSON value and exits with `status`.
  func finish(_ value: JSONValue, pretty: Bool, to responses: Int32, status: Int32) -> Never {
    session.close()
    let text = JSONWriter.string(value)
    Call.write((pretty ? JSONPrettyPrinter.indent(text) : text) + "\n", to: responses)
    Foundation.exit(status)
  }
}
