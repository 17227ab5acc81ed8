import Foundation
import PayServiceCore

/// A back-office method over many objects, one bounded call at a time: a one-shot calls it again
/// with what each answer says to go on with until an answer says nothing more, prints each answer's
/// result as a line of JSON, and tells stderr after each call how far the run got. No answer, and
/// no line printed, grows with the number of objects.
struct PagedCalls {
  let session: OneShotSession
  let method: String
  /// How progress lines start: the command as typed (`payservice billing run`).
  let command: String

  /// Calls `method` with `first`, then with what `next` makes of each answer until it gives nil,
  /// printing each result (indented when `pretty`) and handing it to `take`, which says in a few
  /// words how far the run got. A call answered with an error ends the run: its error is printed as
  /// `payservice call` prints it and the process exits 1.
  func run(
    _ first: [(String, JSONValue)], pretty: Bool, to responses: Int32,
    next: (JSONObject) -> [(String, JSONValue)]?, take: (JSONObject) -> String
  ) {
    let started = ContinuousClock.now
    var params = first
    var calls = 0
    while true {
      let outcome = session.call(method: method, paramsText: OneShotSession.params(params), pretty: pretty)
      guard outcome.exitCode == 0, case .object(let result)? = try? JSONParser.parse(outcome.stdout) else {
        session.close()
        Call.write(outcome.stdout, to: responses)
        Call.write(outcome.stderr, to: STDERR_FILENO)
        Foundation.exit(outcome.exitCode)
      }
      Call.write(outcome.stdout, to: responses)
      calls += 1
      let progress = take(result)
      let following = next(result)
      let elapsed = ContinuousClock.now - started
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      Call.write(
        "\(command): \(Self.count(calls, "call")), \(progress); \(String(format: "%.1f", seconds)) s; "
          + (following == nil ? "done\n" : "going on\n"), to: STDERR_FILENO)
      guard let following else {
        session.close()
        return
      }
      params = following
    }
  }

  /// What goes on from an answer of a method paged by a `cursor`: the cursor it gave, with `limit`
  /// again; nil (done) when it gave none.
  static func cursor(limit: Int) -> (JSONObject) -> [(String, JSONValue)]? {
    { result in
      guard case .string(let cursor)? = result["cursor"] else { return nil }
      return [("limit", .number(String(limit))), ("cursor", .string(cursor))]
    }
  }

  /// `1 call`, `2 calls`: a count and its noun, for people.
  static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}
