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

/// What an App Store JWS is, which decides the claims checked against the config (as Apple's
/// `SignedDataVerifier` checks them).
public enum AppStoreSignedKind: String, Sendable, CaseIterable {
  /// `JWSTransactionDecodedPayload`: `bundleId` and `environment`.
  case transaction
  /// `JWSRenewalInfoDecodedPayload`: `environment` (it carries no bundle id).
  case renewalInfo
  /// `responseBodyV2DecodedPayload`: `bundleId`, `environment` and, in Production, `appAppleId` of
  /// its `data` (or `summary`).
  case notification
  /// `AppTransaction`: `bundleId`, `receiptType` and, in Production, `appAppleId`.
  case appTransaction
}

/// Verifies what the App Store signs (transactions, renewal infos, notifications, app
/// transactions), as Apple's App Store Server Libraries do without online checks, in this order,
/// nothing in the payload used before the step that vouches for it:
/// 1. shape and size: a compact JWS of at most `maxBytes`, JSON header and payload, `alg` ES256 and
///    an `x5c` of exactly three certificates;
/// 2. the ES256 signature over `header.payload` with the leaf's key (swift-crypto);
/// 3. the chain at the payload's own `signedDate` (so data signed while a since-expired leaf was
///    valid still verifies), which must lie in 1970 to 9999 (swift-certificates traps on other
///    years): the leaf and intermediate chain to a configured root, checked by swift-certificates'
///    `Verifier` with RFC 5280's rules, with Apple's marker extensions on the intermediate
///    (1.2.840.113635.100.6.2.1) and the leaf (1.2.840.113635.100.6.11.1);
/// 4. the claims the item's kind carries (`AppStoreSignedKind`) against the config, every
///    environment the payload names agreeing.
/// Items of `Xcode` and `LocalTesting`, which Apple does not sign, are read without steps 2 and 3
/// when (and only when) the config lists their environment and every level of the item names it.
/// Before the signature, the environments an item names may only get it refused (levels that
/// disagree, an unlisted Xcode item), never accepted.
public struct AppStoreSignedDataVerifier: Sendable {
  /// Apple's marker extensions: the WWDR intermediate's and the App Store receipt signing leaf's.
  public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
  public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

  /// A notification with its nested items is a few tens of KiB; a larger JWS is not Apple's.
  public static let maxBytes = 256 << 10

  /// The instants a chain can be checked at: 1970-01-01 to 9999-12-31T23:59:59.999Z, in
  /// milliseconds (GeneralizedTime holds four-digit years only).
  public static let checkableMilliseconds: ClosedRange<Int> = 0...253_402_300_799_999

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
  /// Required for Production notifications and app transactions (the App Store's id of the app).
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

  /// The verified payload of `jws`, a `kind` item, checked at its `signedDate` (milliseconds since
  /// 1970), or at `now` (seconds) when it has none.
  public func verify(_ jws: String, as kind: AppStoreSignedKind, now: Int64) throws(AppStoreVerificationFailure)
    -> JSONObject
  {
    guard jws.utf8.count <= Self.maxBytes else {
      throw AppStoreVerificationFailure(.invalidFormat, "longer than \(Self.maxBytes) bytes: not an App Store JWS")
    }
    let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payloadBytes = Self.base64URL(parts[1]),
      let signatureBytes = Self.base64URL(parts[2])
    else { throw AppStoreVerificationFailure(.invalidFormat, "not a compact JWS: three base64url parts joined by dots") }
    guard case .object(let header)? = try? JSONParser.parse(headerBytes),
      case .object(let payload)? = try? JSONParser.parse(payloadBytes)
    else { throw AppStoreVerificationFailure(.invalidFormat, "the JWS header or payload is not a JSON object") }
    // A claim may make an item refused before its signature is checked, never accepted: an item
    // whose levels name different environments is refused, and one that names an environment Apple
    // does not sign is read unsigned only where the config lists it.
    if let claimed = try Self.environment(of: payload, kind), AppStoreSettings.unsignedEnvironments.contains(claimed) {
      guard environments.contains(claimed) else {
        throw AppStoreVerificationFailure(
          .wrongEnvironment,
          "signed in the \(claimed) environment, which Apple does not sign: accepted only where appStore.environments lists it")
      }
      // Xcode's and local StoreKit testing's items are signed by the developer's own machine, not
      // Apple: as Apple's libraries do, the chain is not checked, and only a config that lists the
      // environment accepts them.
      try checkClaims(payload, kind)
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
      guard case .string(let text) = entry, text.utf8.count <= 16 << 10, let der = Data(base64Encoded: text),
        let certificate = try? Certificate(derEncoded: Array(der))
      else { throw AppStoreVerificationFailure(.invalidFormat, "x5c[\(index)] is not a base64 DER certificate") }
      certificates.append(certificate)
    }
    guard let key = P256.Signing.PublicKey(certificates[0].publicKey),
      let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
      key.isValidSignature(signature, for: Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1]))
    else {
      throw AppStoreVerificationFailure(
        .invalidSignature, "the signature does not verify with the leaf certificate's key (payload or signature altered)")
    }
    var at = now
    if let signedDate = payload["signedDate"] {
      guard case .number(let text) = signedDate, let milliseconds = AppStoreDates.milliseconds(text) else {
        throw AppStoreVerificationFailure(.invalidFormat, "signedDate is not a number of milliseconds")
      }
      guard Self.checkableMilliseconds.contains(milliseconds) else {
        throw AppStoreVerificationFailure(
          .invalidFormat,
          "signedDate \(milliseconds) is outside 1970 to 9999 (0 to 253402300799999 milliseconds): no certificate is valid then")
      }
      at = Int64(milliseconds / 1000)
    }
    guard (0...Int64(Self.checkableMilliseconds.upperBound / 1000)).contains(at) else {
      throw AppStoreVerificationFailure(.invalidFormat, "the service clock is outside 1970 to 9999: no certificate is valid then")
    }
    try checkChain(leaf: certificates[0], intermediate: certificates[1], at: at)
    try checkClaims(payload, kind)
    return payload
  }

  /// Where a notification names its app: the first of these members present (`data` for most
  /// types, `summary` for renewal-date extensions, `externalPurchaseToken`, `appData` for consent).
  static let notificationContainers = ["data", "summary", "externalPurchaseToken", "appData"]

  /// The members that say which app and environment a `kind` item is about: the payload itself, or
  /// for a notification its first container.
  static func app(of payload: JSONObject, _ kind: AppStoreSignedKind) -> JSONObject {
    guard kind == .notification else { return payload }
    for container in notificationContainers {
      if case .object(let inner)? = payload[container] { return inner }
    }
    return JSONObject()
  }

  /// The environment a `kind` item names: at its top level (transactions, renewal infos), in its
  /// container (notifications; an external purchase token's is Sandbox when its
  /// `externalPurchaseId` starts with SANDBOX, else Production), or as an app transaction's
  /// `receiptType`. Every member anywhere in the payload that names one must name the same (an
  /// item whose levels disagree is no App Store item); nil when none does.
  static func environment(of payload: JSONObject, _ kind: AppStoreSignedKind) throws(AppStoreVerificationFailure)
    -> String?
  {
    var named: [(String, JSONValue)] = []
    for key in ["environment", "receiptType"] { if let value = payload[key] { named.append((key, value)) } }
    for container in notificationContainers {
      guard case .object(let inner)? = payload[container] else { continue }
      for key in ["environment", "receiptType"] {
        if let value = inner[key] { named.append(("\(container).\(key)", value)) }
      }
      if container == "externalPurchaseToken", case .string(let id)? = inner["externalPurchaseId"] {
        named.append(("externalPurchaseToken.externalPurchaseId", .string(id.hasPrefix("SANDBOX") ? "Sandbox" : "Production")))
      }
    }
    var found: String?
    for (path, value) in named {
      guard case .string(let environment) = value else {
        throw AppStoreVerificationFailure(.wrongEnvironment, "\(path) is not a string")
      }
      if let found, found != environment {
        throw AppStoreVerificationFailure(
          .wrongEnvironment, "the item names two environments, \(found) and \(environment) (\(path)): refused")
      }
      found = environment
    }
    return found
  }

  /// The claims Apple's verifier checks for a `kind` item, in its order: the bundle id (all but
  /// renewal infos; required), for Production notifications and app transactions the
  /// `appAppleId`, then the environment (required, accepted by the config).
  func checkClaims(_ payload: JSONObject, _ kind: AppStoreSignedKind) throws(AppStoreVerificationFailure) {
    let app = Self.app(of: payload, kind)
    if kind != .renewalInfo {
      guard let bundle = app["bundleId"] else {
        throw AppStoreVerificationFailure(.wrongBundle, "the item names no bundleId; expected \(bundleId)")
      }
      guard bundle == .string(bundleId) else {
        throw AppStoreVerificationFailure(.wrongBundle, "signed for bundleId \(JSONWriter.string(bundle)), not \(bundleId)")
      }
    }
    let environment = try Self.environment(of: payload, kind)
    if environment == "Production", kind == .notification || kind == .appTransaction {
      guard let appAppleId else {
        throw AppStoreVerificationFailure(
          .wrongBundle, "a Production \(kind.rawValue) needs appStore.appAppleId in the config to be checked against")
      }
      guard case .number(let text)? = app["appAppleId"], Int64(text) == appAppleId else {
        throw AppStoreVerificationFailure(.wrongBundle, "signed for another appAppleId than \(appAppleId)")
      }
    }
    guard let environment else {
      throw AppStoreVerificationFailure(.wrongEnvironment, "the item names no environment")
    }
    guard environments.contains(environment) else {
      throw AppStoreVerificationFailure(
        .wrongEnvironment,
        "signed in the \(environment) environment; accepted: \(environments.sorted().joined(separator: ", "))")
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
        // Compared one bound at a time: a certificate may say it ends before it starts.
        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate)]
        where !(certificate.notValidBefore <= moment && moment <= certificate.notValidAfter) {
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
