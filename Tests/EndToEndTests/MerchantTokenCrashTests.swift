import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A kill -9 between an agreement's cancel and its token's unlink at Apple: the unlink is in the
/// journal with the cancel, so the next start sends it; Apple unlinks the token once.
@Suite("Merchant token unlinks survive a kill -9")
struct MerchantTokenCrashTests {
  @Test(
    "killed after the cancel, before Apple acted on the unlink: the next start unlinks it once; a third start sends nothing",
    arguments: StoreBackend.available)
  func killedBeforeUnlink(backend: StoreBackend) throws {
    let server = try MerchantTokenGoldenTests.server()
    defer { server.shutdown() }
    let directory = TestPaths.temporaryDirectory()
    let factory = try TestTokenFactory(merchantIdentifier: MerchantTokenGoldenTests.merchant)
    let (config, values) = try MerchantTokenGoldenTests.setUp(server, factory: factory, in: directory)
    let database = try backend.freshDatabase()
    let checkout = try MerchantTokenGoldenTests.run(
      "1-checkout.jsonl", config: config, database: database, now: MerchantTokenGoldenTests.checkoutAt, values: values)
    #expect(checkout.status == 0, "stderr: \(checkout.stderr)")
    let cancel = try #require(
      try String(
        contentsOf: MerchantTokenGoldenTests.folder.appendingPathComponent("2-notifications.jsonl"), encoding: .utf8
      ).split(separator: "\n").first { $0.contains(#""id":"cancel-b""#) }.map(String.init))
    let arguments = [
      "--config", config.path, "--database", database, "--now", MerchantTokenGoldenTests.notifiedAt, "--back-office",
    ]
    let unlinks = { server.requests.filter { $0.path.hasSuffix("/merchantToken/unlink") } }

    // Apple holds the unlink before acting on it; the process is killed meanwhile.
    let gate = MerchantTokenTestServer.Gate()
    server.inject(.holdBeforeExecuting(gate), route: .unlink)
    let first = try RunningPayservice(arguments)
    #expect(try first.ask(cancel).contains(#""status":"succeeded""#))
    #expect(gate.waitUntilReached(timeout: 60), "the unlink never reached Apple")
    kill(first.process.processIdentifier, SIGKILL)
    _ = first.waitForExit()
    gate.release()
    #expect(server.unlinkCount(token: "MTOKEN-B-0002") == 0)

    // The next start's sweep sends the unlink the killed process had in flight: Apple acts once.
    let second = try RunningPayservice(arguments)
    #expect(try second.ask(#"{"jsonrpc":"2.0","id":1,"method":"health"}"#).contains(#""status":"ok""#))
    second.finish()
    #expect(server.unlinkCount(token: "MTOKEN-B-0002") == 1)
    #expect(unlinks().map(\.status) == [0, 204])
    #expect(unlinks().allSatisfy { $0.body == #"{"merchantTokenIdentifier":"MTOKEN-B-0002"}"# })

    // Settled: a third start sends nothing, and the same cancel again answers as before.
    let third = try RunningPayservice(arguments)
    #expect(try third.ask(cancel).contains(#""status":"succeeded""#))
    third.finish()
    #expect(unlinks().count == 2)
    #expect(server.unlinkCount(token: "MTOKEN-B-0002") == 1)
  }
}
