import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing
import X509

/// App Store signed data from Apple's own library's tests: each accepted or refused with its cause.
@Suite("App Store signed data")
struct AppStoreSignedDataTests {
  static func vector(_ name: String) throws -> String {
    try String(contentsOfFile: TestPaths.path("Tests/PayServiceCoreTests/Fixtures/appstore/\(name)"), encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func testRoot() throws -> Certificate {
    try Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: TestPaths.path("Tests/PayServiceCoreTests/Fixtures/appstore/testCA.der")))))
  }

  static func verifier(roots: [Certificate]? = nil, environments: Set<String> = ["Sandbox"]) throws -> AppStoreSignedDataVerifier {
    AppStoreSignedDataVerifier(
      roots: try roots ?? [testRoot()], bundleId: "com.example", appAppleId: nil, environments: environments)
  }

  static func cause(_ body: () throws(AppStoreVerificationFailure) -> JSONObject) -> AppStoreVerificationFailure.Cause? {
    do {
      _ = try body()
      return nil
    } catch {
      return error.cause
    }
  }

  @Test("a transaction, a renewal info and a notification signed by the test chain verify at their signedDate")
  func accepted() throws {
    let verifier = try Self.verifier()
    let transaction = try verifier.verify(try Self.vector("transactionInfo"), as: .transaction, now: TestConfig.now)
    #expect(transaction["bundleId"] == .string("com.example"))
    #expect(transaction["signedDate"] == .number("1672956154000"))
    let renewal = try verifier.verify(try Self.vector("renewalInfo"), as: .renewalInfo, now: TestConfig.now)
    #expect(renewal["environment"] == .string("Sandbox"))
    let notification = try verifier.verify(try Self.vector("testNotification"), as: .notification, now: TestConfig.now)
    #expect(notification["notificationType"] == .string("TEST"))
    #expect(notification["notificationUUID"] == .string("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"))
  }

  @Test("refused with the cause named: another bundle, no x5c, a byte of payload or signature changed, another root, another environment")
  func refused() throws {
    let verifier = try Self.verifier()
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try verifier.verify(try! Self.vector("wrongBundleId"), as: .notification, now: TestConfig.now) } == .wrongBundle)
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try verifier.verify(try! Self.vector("missingX5CHeaderClaim"), as: .notification, now: TestConfig.now) } == .invalidFormat)
    let jws = try Self.vector("transactionInfo")
    var parts = jws.split(separator: ".").map(String.init)
    // One byte of the payload: its base64url text decodes to other bytes.
    var payload = Array(parts[1].utf8)
    payload[10] = payload[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    let tamperedPayload = [parts[0], String(decoding: payload, as: UTF8.self), parts[2]].joined(separator: ".")
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try verifier.verify(tamperedPayload, as: .transaction, now: TestConfig.now) } == .invalidSignature)
    var signature = Array(parts[2].utf8)
    signature[5] = signature[5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    parts[2] = String(decoding: signature, as: UTF8.self)
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try verifier.verify(parts.joined(separator: "."), as: .transaction, now: TestConfig.now) } == .invalidSignature)
    let appleRoot = AppStoreSignedDataVerifier(
      roots: [AppStoreSignedDataVerifier.appleRoot], bundleId: "com.example", appAppleId: nil,
      environments: ["Sandbox"])
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try appleRoot.verify(jws, as: .transaction, now: TestConfig.now) } == .invalidCertificate)
    let production = try Self.verifier(environments: ["Production"])
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try production.verify(jws, as: .transaction, now: TestConfig.now) } == .wrongEnvironment)
    #expect(Self.cause { () throws(AppStoreVerificationFailure) in try verifier.verify("a.b", as: .transaction, now: TestConfig.now) } == .invalidFormat)
  }
}

/// The test signing authority's items, and the faults it makes, through the same verifier.
@Suite("App Store signed data: the test authority")
struct AppStoreTestAuthorityTests {
  static let payload = #"{"bundleId":"com.example","environment":"Sandbox","signedDate":1700000000000,"transactionId":"1"}"#

  func verifier(_ authority: AppStoreTestAuthority) -> AppStoreSignedDataVerifier {
    AppStoreSignedDataVerifier(roots: [authority.root], bundleId: "com.example", appAppleId: nil, environments: ["Sandbox"])
  }

  func cause(_ verifier: AppStoreSignedDataVerifier, _ jws: String) -> AppStoreVerificationFailure.Cause? {
    do {
      _ = try verifier.verify(jws, as: .transaction, now: TestConfig.now)
      return nil
    } catch {
      return error.cause
    }
  }

  @Test("its items verify; without a marker, out of the leaf's validity at signedDate or under another root they are invalid_certificate")
  func faults() throws {
    let authority = try AppStoreTestAuthority()
    #expect(cause(verifier(authority), try authority.sign(Self.payload)) == nil)
    #expect(try verifier(authority).verify(try authority.sign(Self.payload), as: .transaction, now: TestConfig.now)["transactionId"] == .string("1"))
    let noLeafMarker = try AppStoreTestAuthority(leafMarker: false)
    #expect(cause(verifier(noLeafMarker), try noLeafMarker.sign(Self.payload)) == .invalidCertificate)
    let noIntermediateMarker = try AppStoreTestAuthority(intermediateMarker: false)
    #expect(cause(verifier(noIntermediateMarker), try noIntermediateMarker.sign(Self.payload)) == .invalidCertificate)
    // A leaf that expired before the service clock still verifies what it signed while valid...
    let expired = try AppStoreTestAuthority(
      validFrom: Date(timeIntervalSince1970: 1_690_000_000), validUntil: Date(timeIntervalSince1970: 1_710_000_000))
    #expect(cause(verifier(expired), try expired.sign(Self.payload)) == nil)
    // ...and not what is dated after its validity.
    let late = #"{"bundleId":"com.example","environment":"Sandbox","signedDate":1720000000000}"#
    #expect(cause(verifier(expired), try expired.sign(late)) == .invalidCertificate)
    // Signed by one authority, verified against another's root.
    #expect(cause(verifier(try AppStoreTestAuthority()), try authority.sign(Self.payload)) == .invalidCertificate)
    #expect(cause(verifier(authority), try authority.sign(Self.payload, x5c: ["AAAA"])) == .invalidFormat)
  }
}
