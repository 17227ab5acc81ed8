import Crypto
import Foundation
import PayServiceCore
import PayServiceTestSupport
import Synchronization

/// What the APNs tests share: a team and its key ids, a Wallet order type identifier as the topic,
/// device tokens, a settable clock, and a test server that knows them.
enum APNsFixture {
  static let teamId = "TEAM123456"
  static let keyId = "KEY1234567"
  static let topic = "order.com.example.shop"
  static let otherTopic = "order.com.example.other"
  /// The clocks' start: 2023-11-14T22:13:20Z.
  static let start: Int64 = 1_700_000_000

  /// A device token of 64 hex digits: `n` as two hex digits, 32 times.
  static func device(_ n: Int) -> String {
    let pair = String(n, radix: 16)
    return String(repeating: pair.count == 1 ? "0" + pair : pair, count: 32)
  }

  /// A test server of the team with both topics, `key`'s public half registered, and devices 1 to
  /// 4 registered for `topic`.
  static func server(
    key: P256.Signing.PrivateKey, clock: Clock? = nil, tokenUpdateIntervalSeconds: Int64 = 20 * 60
  ) throws -> APNsTestServer {
    let server: APNsTestServer
    if let clock {
      server = try APNsTestServer(
        teamId: teamId, keyId: keyId, publicKey: key.publicKey, topics: [topic, otherTopic],
        tokenUpdateIntervalSeconds: tokenUpdateIntervalSeconds, now: { clock.now })
    } else {
      server = try APNsTestServer(
        teamId: teamId, keyId: keyId, publicKey: key.publicKey, topics: [topic, otherTopic],
        tokenUpdateIntervalSeconds: tokenUpdateIntervalSeconds)
    }
    for n in 1...4 { server.registerDevice(device(n), topic: topic) }
    return server
  }

  /// A clock the test moves (unix seconds).
  final class Clock: Sendable {
    let seconds: Atomic<Int64>

    init(_ start: Int64 = APNsFixture.start) {
      seconds = Atomic(start)
    }

    var now: Int64 { seconds.load(ordering: .relaxed) }

    func set(_ value: Int64) {
      seconds.store(value, ordering: .relaxed)
    }
  }

  /// The `n`th `apns-id` the test server hands out.
  static func apnsId(_ n: Int) -> String {
    let hex = String(n, radix: 16, uppercase: true)
    return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
  }
}
