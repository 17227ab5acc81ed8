import Crypto
import Foundation
import PayServiceAppStore
import PayServiceCore
import PayServiceTestSupport
import Synchronization

/// What the App Store Server API tests share: Apple's test key (Fixtures/testSigningKey.p8), the
/// ids its tokens carry, a test server that knows them, and a settable clock.
enum AppStoreFixture {
  static let keyId = "2X9R4HXF34"
  static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
  static let bundleId = "com.example"

  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

  /// The PEM text of Apple's test key.
  static func keyPEM() throws -> String {
    try String(contentsOf: fixtures.appendingPathComponent("testSigningKey.p8"), encoding: .utf8)
  }

  static func key() throws -> P256.Signing.PrivateKey {
    try P256.Signing.PrivateKey(pemRepresentation: try keyPEM())
  }

  /// A test server that accepts tokens of Apple's test key with the ids above.
  static func server(
    historyPageSize: Int = 20, notificationPageSize: Int = 20, now: (@Sendable () -> Int64)? = nil
  ) throws -> AppStoreServerTestServer {
    if let now {
      return try AppStoreServerTestServer(
        publicKey: try key().publicKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId,
        historyPageSize: historyPageSize, notificationPageSize: notificationPageSize, now: now)
    }
    return try AppStoreServerTestServer(
      publicKey: try key().publicKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId,
      historyPageSize: historyPageSize, notificationPageSize: notificationPageSize)
  }

  /// A clock the test moves (unix seconds).
  final class Clock: Sendable {
    let seconds: Atomic<Int64>

    init(_ start: Int64) {
      seconds = Atomic(start)
    }

    var now: Int64 { seconds.load(ordering: .relaxed) }

    func advance(_ by: Int64) {
      seconds.add(by, ordering: .relaxed)
    }
  }
}
