import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Why an item the App Store signed was refused: the check that failed and what it found. Nothing
/// is granted for a refused item.
public struct AppStoreVerificationFailure: Error, Equatable, Sendable {
  public enum Cause: String, Sendable, CaseIterable {
    /// Not a compact JWS of three base64url parts with JSON header and payload, an `alg` other
    /// than ES256, or an `x5c` that is not three certificates.
    case invalidFormat = "invalid_format"
    /// The certificates do not chain to a configured root, lack Apple's marker extensions, or were
    /// not valid at the item's `signedDate`.
    case invalidCertificate = "invalid_certificate"
    /// The signature does not verify with the leaf certificate's key.
    case invalidSignature = "invalid_signature"
    /// Signed for another app: `bundleId` (or `appAppleId`) is not the config's.
    case wrongBundle = "wrong_bundle"
    /// Signed in an environment the config does not accept.
    case wrongEnvironment = "wrong_environment"
  }

  public var cause: Cause
  public var message: String

  public init(_ cause: Cause, _ message: String) {
    self.cause = cause
    self.message = message
  }
}

/// Verifies what the App Store signs (transactions, renewal infos, notifications, app
/// transactions), as Apple's App Store Server Libraries do without online checks: a compact JWS
/// with `alg` ES256 and an `x5c` of exactly three certificates; the leaf and intermediate chain to
/// a configured root, checked by swift-certificates' `Verifier` with RFC 5280's rules at the item's
/// own `signedDate` (so data signed while a since-expired leaf was valid still verifies) and
/// Apple's marker extensions on the intermediate (1.2.840.113635.100.6.2.1) and the leaf
/// (1.2.840.113635.100.6.11.1); the ES256 signature over `header.payload` with the leaf's key
/// (swift-crypto); then the payload's `bundleId`, `appAppleId` and `environment` against the config.
/// Items of `Xcode` and `LocalTesting`, which Apple does not sign, are read without the chain when
/// (and only when) the config lists their environment.
public struct AppStoreSignedDataVerifier: Sendable {
  /// Apple's marker extensions: the WWDR intermediate's and the App Store receipt signing leaf's.
  public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
  public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

  /// Apple Root CA - G3, which the App Store's chains end at: the built-in root (the same one as
  /// Apple Pay tokens', `AppleRootCertificate`).
  public static let appleRoot: Certificate = {
    do {
      return try Certificate(pemEncoded: AppleRootCertificate.g3PEM)
    } catch {
      preconditionFailure("the built-in Apple Root CA - G3 does not parse: \(error)")
    }
  }()

  let roots: [Certificate]
  let bundleId: String
  /// Required for Production (the App Store's id of the app); nil accepts any in other environments.
  let appAppleId: Int64?
  /// The environments accepted: `Production`, `Sandbox` (and `Xcode`, `LocalTesting` only when
  /// the config says so).
  let environments: Set<String>

  public init(roots: [Certificate], bundleId: String, appAppleId: Int64?, environments: Set<String>) {
    self.roots = roots
    self.bundleId = bundleId
    self.appAppleId = appAppleId
    self.environments = environments
  }

  /// The verified payload of `jws`, checked at its `signedDate` (milliseconds since 1970), or at
  /// `now` (seconds) when it has none.
  public func verify(_ jws: String, now: Int64) throws(AppStoreVerificationFailure) -> JSONObject {
    let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payloadBytes = Self.base64URL(parts[1]),
      let signatureBytes = Self.base64URL(parts[2])
    else { throw AppStoreVerificationFailure(.invalidFormat, "not a compact JWS: three base64url parts joined by dots") }
    guard case .object(let header)? = try? JSONParser.parse(headerBytes),
      case .object(let payload)? = try? JSONParser.parse(payloadBytes)
    else { throw AppStoreVerificationFailure(.invalidFormat, "the JWS header or payload is not a JSON object") }
    if let environment = Self.environment(of: payload), AppStoreSettings.unsignedEnvironments.contains(environment) {
      guard environments.contains(environment) else {
        throw AppStoreVerificationFailure(
          .wrongEnvironment,
          "signed in the \(environment) environment, which Apple does not sign: accepted only where appStore.environments lists it")
      }
      // Xcode's and local StoreKit testing's items are signed by the developer's own machine, not
      // Apple: as Apple's libraries do, the chain is not checked, and only a config that lists the
      // environment accepts them.
      try checkApp(payload)
      return payload
    }
    guard header["alg"] == .string("ES256") else {
      throw AppStoreVerificationFailure(.invalidFormat, "the JWS alg is not ES256")
    }
    guard case .array(let chain)? = header["x5c"], chain.count == 3 else {
      throw AppStoreVerificationFailure(.invalidFormat, "the JWS header has no x5c of exactly three certificates")
    }
    var certificates: [Certificate] = []
    for (index, entry) in chain.enumerated() {
      guard case .string(let text) = entry, let der = Data(base64Encoded: text),
        let certificate = try? Certificate(derEncoded: Array(der))
      else { throw AppStoreVerificationFailure(.invalidFormat, "x5c[\(index)] is not a base64 DER certificate") }
      certificates.append(certificate)
    }
    var at = now
    if let signedDate = payload["signedDate"] {
      guard case .number(let text) = signedDate, let milliseconds = AppStoreDates.milliseconds(text) else {
        throw AppStoreVerificationFailure(.invalidFormat, "signedDate is not a number of milliseconds")
      }
      at = Int64(milliseconds / 1000)
    }
    try checkChain(leaf: certificates[0], intermediate: certificates[1], at: at)
    guard let key = P256.Signing.PublicKey(certificates[0].publicKey),
      let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
      key.isValidSignature(signature, for: Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1]))
    else {
      throw AppStoreVerificationFailure(
        .invalidSignature, "the signature does not verify with the leaf certificate's key (payload or signature altered)")
    }
    try checkApp(payload)
    return payload
  }

  /// The environment an item names: at its top level, in `data` (notifications), or as an app
  /// transaction's `receiptType`.
  static func environment(of payload: JSONObject) -> String? {
    if case .object(let data)? = payload["data"], case .string(let environment)? = data["environment"] {
      return environment
    }
    if case .string(let environment)? = payload["environment"] ?? payload["receiptType"] { return environment }
    return nil
  }

  /// The payload's app: `bundleId` and `environment` at its top level (transactions, renewal infos,
  /// app transactions) or in `data` (notifications), `appAppleId` likewise.
  func checkApp(_ payload: JSONObject) throws(AppStoreVerificationFailure) {
    var app = payload
    if case .object(let data)? = payload["data"] { app = data }
    if let bundle = app["bundleId"], bundle != .string(bundleId) {
      throw AppStoreVerificationFailure(.wrongBundle, "signed for bundleId \(JSONWriter.string(bundle)), not \(bundleId)")
    }
    guard let environment = Self.environment(of: payload) else {
      throw AppStoreVerificationFailure(.wrongEnvironment, "the item names no environment")
    }
    guard environments.contains(environment) else {
      throw AppStoreVerificationFailure(
        .wrongEnvironment,
        "signed in the \(environment) environment; accepted: \(environments.sorted().joined(separator: ", "))")
    }
    if environment == "Production", let appAppleId {
      guard case .number(let text)? = app["appAppleId"], Int64(text) == appAppleId else {
        throw AppStoreVerificationFailure(.wrongBundle, "signed for another appAppleId than \(appAppleId)")
      }
    }
  }

  /// The leaf and intermediate chain to a configured root at `at` (seconds), with Apple's markers.
  func checkChain(leaf: Certificate, intermediate: Certificate, at: Int64) throws(AppStoreVerificationFailure) {
    let roots = self.roots
    let result = Awaited(on: Self.executor) { () -> String? in
      var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
        RFC5280Policy(fixedExpiryValidationTime: Date(timeIntervalSince1970: TimeInterval(at)))
        AppleMarkerPolicy()
      }
      switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
      case .validCertificate(let chain) where chain.count == 3: return nil
      case .validCertificate: return "the chain is not a leaf, an intermediate and a root"
      case .couldNotValidate(let failures):
        // The verifier's own reasons print whole certificates: say which check failed instead.
        let reasons = failures.map { "\($0.policyFailureReason)" }
        if let marker = reasons.first(where: { $0.contains("lacks Apple's marker") }) { return marker }
        let moment = Date(timeIntervalSince1970: TimeInterval(at))
        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate)]
        where !(certificate.notValidBefore...certificate.notValidAfter).contains(moment) {
          return
            "the \(name) certificate was not valid then (valid from \(RFC3339.format(Int64(certificate.notValidBefore.timeIntervalSince1970))) to \(RFC3339.format(Int64(certificate.notValidAfter.timeIntervalSince1970))))"
        }
        return "they are not issued by a configured root (appStore.rootCertificates; Apple Root CA - G3 by default)"
      }
    }.wait()
    if let reason = result {
      throw AppStoreVerificationFailure(
        .invalidCertificate, "the certificates do not chain to a configured root at \(RFC3339.format(at)): \(reason)")
    }
  }

  /// The thread the (async) chain verification runs on, waited for by the caller.
  static let executor = TaskThread(name: "payservice-appstore-verify")

  static func base64URL(_ part: Substring.UTF8View.SubSequence) -> [UInt8]? {
    var text = String(decoding: part, as: UTF8.self)
    guard !text.isEmpty, text.utf8.allSatisfy({ Self.isBase64URL($0) }) else { return nil }
    text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
    return Data(base64Encoded: text).map(Array.init)
  }

  static func isBase64URL(_ byte: UInt8) -> Bool {
    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D
      || byte == 0x5F
  }
}

/// Apple's App Store chain: the intermediate (the chain's second certificate) carries
/// 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1.
struct AppleMarkerPolicy: VerifierPolicy {
  let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
    AppStoreSignedDataVerifier.intermediateMarker, AppStoreSignedDataVerifier.leafMarker,
  ]

  mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
    guard chain.count == 3 else { return .failsToMeetPolicy(reason: "the chain is not three certificates long") }
    guard chain[0].extensions[oid: AppStoreSignedDataVerifier.leafMarker] != nil else {
      return .failsToMeetPolicy(reason: "the leaf lacks Apple's marker 1.2.840.113635.100.6.11.1")
    }
    guard chain[1].extensions[oid: AppStoreSignedDataVerifier.intermediateMarker] != nil else {
      return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker 1.2.840.113635.100.6.2.1")
    }
    return .meetsPolicy
  }
}
