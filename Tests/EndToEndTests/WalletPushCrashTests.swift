import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A kill -9 between a shipment and its push: the push is in the journal with the shipment, so
/// the next start sends it; it arrives, and at most once more than it should.
@Suite("Wallet order pushes survive a kill -9")
struct WalletPushCrashTests {
  @Test("killed while APNs holds the push: after a restart the push arrives, at most once more; a third start sends nothing", arguments: StoreBackend.available)
  func killedDuringPush(backend: StoreBackend) throws {
    let server = try WalletOrdersGoldenTests.apns()
    defer { server.shutdown() }
    let directory = TestPaths.temporaryDirectory()
    let config = try WalletOrdersGoldenTests.config(server, in: directory)
    let database = try backend.freshDatabase()
    let arguments = ["--config", config.path, "--database", database, "--now", WalletOrdersGoldenTests.now, "--back-office"]
    // The purchase and the phone's registration, from the golden case's requests.
    let requests = try String(
      contentsOf: WalletOrdersGoldenTests.folder.appendingPathComponent("requests.jsonl"), encoding: .utf8
    ).split(separator: "\n").map(String.init)
    let ship = try #require(requests.first { $0.contains(#""id":"ship-grinder""#) })

    let first = try RunningPayservice(arguments)
    for line in requests.prefix(3) { _ = try first.ask(line) }
    let gate = APNsTestServer.Gate()
    server.inject(.hold(gate), deviceToken: WalletOrdersGoldenTests.phone)
    let answer = try first.ask(ship)
    #expect(answer.contains(#""status":"succeeded""#))
    #expect(gate.waitUntilReached(timeout: 60), "the push never reached APNs")
    kill(first.process.processIdentifier, SIGKILL)
    _ = first.waitForExit()
    gate.release()

    // The next start's sweep sends the push the killed process had in flight.
    let second = try RunningPayservice(arguments)
    #expect(try second.ask(#"{"jsonrpc":"2.0","id":1,"method":"health"}"#).contains(#""status":"ok""#))
    second.finish()
    let pushes = server.pushes(to: WalletOrdersGoldenTests.phone)
    #expect((2...2).contains(pushes.count), "\(pushes.map(\.status))")
    #expect(server.delivered(to: WalletOrdersGoldenTests.phone) >= 1)

    // Settled: a third start sends nothing.
    let third = try RunningPayservice(arguments)
    #expect(try third.ask(#"{"jsonrpc":"2.0","id":1,"method":"health"}"#).contains(#""status":"ok""#))
    third.finish()
    #expect(server.pushes(to: WalletOrdersGoldenTests.phone).count == pushes.count)
  }
}
