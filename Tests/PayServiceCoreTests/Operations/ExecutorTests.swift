import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// The executor runs pipelined operation requests (`tally`, one `Tally` each) in the operation's
/// steps: the first transactions together, the calls overlapping with none open, the settlements
/// together; answers in request order, and written (flushed) once the work they report is durable.
@Suite("Executor", .serialized)
struct ExecutorTests {
  /// Runs `lines` as the server thread would, all of them one read: the answers, each flush's
  /// bytes, and the requests committed in groups.
  static func execute(_ lines: [String], context: ServiceContext, groupCommits: Bool = true) -> (
    answers: String, flushes: [Int], grouped: Int
  ) {
    var table = MethodTable()
    MethodRegistry.register([TallyMethod.self], into: &table)
    let log = RequestLog(fd: open("/dev/null", O_WRONLY), level: .quiet)
    let handler = RequestHandler(context: context, methods: table, log: log)
    let executor = Executor(handler: handler, log: log, groupCommits: groupCommits)
    var writer = JSONWriter()
    var written: [UInt8] = []
    var flushes: [Int] = []
    let parsed = lines.map { line in Array(line.utf8).withUnsafeBytes { handler.parse($0) } }
    var next = 0
    while next < parsed.count {
      next = executor.answer(from: next, before: parsed.count, { parsed[$0] }, into: &writer) { pending in
        flushes.append(pending.count)
        written += pending.bytes
        pending.reset()
      }
    }
    written += writer.bytes
    return (String(decoding: written, as: UTF8.self), flushes, executor.ordersCommittedInGroups)
  }

  static func tally(_ id: Int, _ tallyId: String, _ amount: Int, _ remote: TallyRemote) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"tally","params":{"tallyId":"\#(tallyId)","amount":\#(amount),"remote":"\#(remote.name)"}}"#
  }

  static func answer(_ id: Int, _ status: String, _ total: Int) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"result":{"status":"\#(status)","total":\#(total)}}"# + "\n"
  }

  @Test("pipelined requests: first steps together, calls overlapping, settlements together", arguments: StoreBackend.available)
  func overlap(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend)
    let remote = TallyRemote()
    let run = Self.execute((1...3).map { Self.tally($0, "t\($0)", $0, remote) }, context: context)
    #expect(run.answers == Self.answer(1, "added", 1) + Self.answer(2, "added", 3) + Self.answer(3, "added", 6))
    #expect(
      remote.events == [
        "prepare t1", "prepare t2", "prepare t3", "send t1", "send t2", "send t3", "reply t1", "reply t2", "reply t3",
        "settle t1", "settle t2", "settle t3",
      ])
    // One write, after the settlements' commit.
    #expect(run.flushes == [run.answers.utf8.count])
    #expect(run.grouped == 3)
  }

  @Test("without group commits each request runs its steps alone, and is written before the next begins", arguments: StoreBackend.available)
  func alone(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend)
    let remote = TallyRemote()
    let run = Self.execute((1...2).map { Self.tally($0, "t\($0)", $0, remote) }, context: context, groupCommits: false)
    #expect(run.answers == Self.answer(1, "added", 1) + Self.answer(2, "added", 3))
    #expect(remote.events == ["prepare t1", "send t1", "reply t1", "settle t1", "prepare t2", "send t2", "reply t2", "settle t2"])
    #expect(run.flushes == [Self.answer(1, "added", 1).utf8.count, Self.answer(2, "added", 3).utf8.count])
    #expect(run.grouped == 0)
  }

  @Test("a lost answer, a refusal and bad params are answered in their places; the group goes on", arguments: StoreBackend.available)
  func mixed(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend)
    let remote = TallyRemote()
    remote.loseNextAnswer(to: "t2")
    let lines = [
      Self.tally(1, "t1", 1, remote), Self.tally(2, "t2", 2, remote), Self.tally(3, "t3", 0, remote),
      #"{"jsonrpc":"2.0","id":4,"method":"tally","params":{"tallyId":"t4","amount":"x","remote":"\#(remote.name)"}}"#,
      Self.tally(5, "t5", 5, remote),
    ]
    let run = Self.execute(lines, context: context)
    #expect(
      run.answers == Self.answer(1, "added", 1) + Self.answer(2, "unanswered", 0) + Self.answer(3, "refused", 0)
        + #"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"amount","message":"must be an integer from -9223372036854775808 to 9223372036854775807, got a string"}]}}}"#
        + "\n" + Self.answer(5, "added", 8))
    #expect(remote.events.filter { $0.hasPrefix("send") } == ["send t1", "send t2", "send t5"])
    // t2 stays pending: the same request later completes it with its one effect.
    let again = Self.execute([Self.tally(6, "t2", 2, remote)], context: context)
    #expect(again.answers == Self.answer(6, "added", 3))
    #expect(remote.effects == 3)
  }

  @Test("a line of another method ends the group and is answered in its place", arguments: StoreBackend.available)
  func otherMethod(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend)
    let remote = TallyRemote()
    let lines = [
      Self.tally(1, "t1", 1, remote), Self.tally(2, "t2", 2, remote), #"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
      Self.tally(4, "t4", 4, remote),
    ]
    let run = Self.execute(lines, context: context)
    #expect(
      run.answers == Self.answer(1, "added", 1) + Self.answer(2, "added", 3)
        + #"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: nope"}}"# + "\n"
        + Self.answer(4, "added", 7))
    #expect(
      remote.events == [
        "prepare t1", "prepare t2", "send t1", "send t2", "reply t1", "reply t2", "settle t1", "settle t2",
        "prepare t4", "send t4", "reply t4", "settle t4",
      ])
    // The group's answers are written before the next request's work; an unknown method's waits.
    #expect(run.flushes.count == 2)
  }

  @Test("the same key twice in one group: one effect, the same answer twice", arguments: StoreBackend.available)
  func sameKey(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend)
    let remote = TallyRemote()
    let run = Self.execute([Self.tally(1, "t1", 5, remote), Self.tally(2, "t1", 5, remote)], context: context)
    #expect(run.answers == Self.answer(1, "added", 5) + Self.answer(2, "added", 5))
    #expect(remote.effects == 1)
    #expect(remote.events.filter { $0.hasPrefix("prepare") } == ["prepare t1"])
  }
}
