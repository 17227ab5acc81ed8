import Dispatch
import Foundation
import PayServiceCore
import PayServiceTestSupport
import SwiftASN1
import Synchronization
import Testing

/// In-app purchases under replays from many processes and a process killed mid-stream: every
/// purchase credited once, every spending made once.
@Suite("App Store exactly once across processes", .serialized)
struct AppStoreConcurrencyTests {
  static let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
  static let coins = "com.example.beans.coins100"

  /// The appstore golden case's config, trusting `shop`'s root.
  static func config(_ shop: AppStoreShop) throws -> String {
    let directory = TestPaths.temporaryDirectory()
    var serializer = DER.Serializer()
    try serializer.serialize(shop.authority.root)
    let root = directory.appendingPathComponent("root.der")
    try Data(serializer.serializedBytes).write(to: root)
    let text = try String(contentsOfFile: AppStoreGoldenTests.config, encoding: .utf8).replacingOccurrences(
      of: "rootCertificates: [test-root.der]", with: "rootCertificates: [\(root.path)]")
    let file = directory.appendingPathComponent("config.yaml")
    try text.write(to: file, atomically: true, encoding: .utf8)
    return file.path
  }

  /// `count` coin purchases, each as the app sends it and as Apple's ONE_TIME_CHARGE notification.
  static func purchases(_ shop: AppStoreShop, count: Int) throws -> [String] {
    var lines: [String] = []
    for index in 0..<count {
      let id = String(2_000_000_000_001_000 + index)
      let minute = String(format: "2026-11-21T10:%02d:00Z", index)
      let signed = try shop.transaction(
        id: id, product: coins, purchase: AppStoreShop.ms(minute), signed: AppStoreShop.ms(minute),
        appAccountToken: account)
      lines.append(#"{"jsonrpc":"2.0","id":1,"method":"verifyAppStoreTransaction","params":{"signedTransaction":"\#(signed)"}}"#)
      let notification = try shop.notification(
        uuid: "b0000000-0000-4000-8000-\(String(format: "%012d", index))", type: "ONE_TIME_CHARGE",
        signed: AppStoreShop.ms(minute) + 500, transaction: signed)
      lines.append(#"{"jsonrpc":"2.0","id":1,"method":"processAppStoreNotification","params":{"signedPayload":"\#(notification)"}}"#)
    }
    return lines
  }

  static func spend(_ index: Int) -> String {
    #"{"jsonrpc":"2.0","id":1,"method":"consumeUnits","params":{"account":"\#(account)","entitlement":"coins","units":10,"consumptionId":"spend-\#(index)"}}"#
  }

  static func balance(_ config: String, _ database: String) throws -> String {
    let process = try RunningPayservice(["--config", config, "--database", database, "--now", "2026-11-21T12:00:00Z", "--quiet"])
    defer { process.finish() }
    let answer = try JSONParser.parse(
      try process.ask(#"{"jsonrpc":"2.0","id":1,"method":"getEntitlements","params":{"appAccountToken":"\#(account)"}}"#))
    return answer["result"]?["balances"].map(\.compact) ?? answer.compact
  }

  @Test("8 processes replay 12 purchases (each sent by the app and by Apple) and 6 spendings: credited and spent once", arguments: StoreBackend.available)
  func replays(backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let config = try Self.config(shop)
    let database = try backend.freshDatabase()
    let lines = try Self.purchases(shop, count: 12)
    let answers = Mutex<[String: Set<String>]>([:])
    let failures = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
      do {
        let process = try RunningPayservice(
          ["--config", config, "--database", database, "--now", "2026-11-21T12:00:00Z", "--quiet"])
        defer { process.finish() }
        var random = SplitMix64(seed: UInt64(worker + 1))
        let mine = (lines + (0..<6).map(Self.spend)).shuffled(using: &random)
        for line in mine {
          let answer = try process.ask(line, timeout: 60)
          guard answer.contains(#""status":"succeeded""#) else {
            failures.withLock { $0.append(answer) }
            continue
          }
          if line.contains("consumeUnits") {
            answers.withLock { $0[line, default: []].insert(answer) }
          }
        }
      } catch {
        failures.withLock { $0.append("\(error)") }
      }
    }
    #expect(failures.withLock { $0 } == [])
    // Each spending answered the same to all 8 processes: made once.
    #expect(answers.withLock { $0.count } == 6)
    #expect(answers.withLock { $0.values.allSatisfy { $0.count == 1 } })
    #expect(
      try Self.balance(config, database)
        == #"[{"entitlement":"coins","units":1140,"purchased":1200,"refunded":0,"consumed":60}]"#)
  }

  @Test("a process killed (SIGKILL) while it applies a stream of notifications; all sent again: each applied once", arguments: StoreBackend.available)
  func killed(backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let config = try Self.config(shop)
    let lines = try Self.purchases(shop, count: 20).enumerated().map { index, line in
      line.replacingOccurrences(of: #""id":1,"#, with: #""id":\#(index + 1),"#)
    }
    for answered in [3, 17, 31] {
      let database = try backend.freshDatabase()
      let process = try RunningPayservice(
        ["--config", config, "--database", database, "--now", "2026-11-21T12:00:00Z", "--quiet"])
      for line in lines { process.send(line) }
      for _ in 0..<answered { _ = process.readLine(timeout: 30) }
      kill(process.process.processIdentifier, SIGKILL)
      #expect(process.waitForExit(timeout: 30) == SIGKILL)
      let again = try RunningPayservice(
        ["--config", config, "--database", database, "--now", "2026-11-21T12:00:00Z", "--quiet"])
      for line in lines {
        let answer = try again.ask(line, timeout: 30)
        #expect(answer.contains(#""status":"succeeded""#), "\(answer)")
      }
      again.finish()
      #expect(
        try Self.balance(config, database)
          == #"[{"entitlement":"coins","units":2000,"purchased":2000,"refunded":0,"consumed":0}]"#, "killed after \(answered)")
    }
  }
}
