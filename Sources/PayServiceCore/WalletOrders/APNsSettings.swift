import Foundation

/// How payservice reaches Apple Push Notification service for Wallet order updates, with a
/// token-based connection ("Establishing a token-based connection to APNs",
/// https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns):
/// the team's APNs authentication key, its key id, the team id, and where APNs is served.
///
/// The key is the `.p8` file's text, read at start and never printed: `description` and `dump`
/// leave it out.
public struct APNsSettings: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// APNs' production server, for orders of Wallet on customers' devices.
  public static let productionBase = "https://api.push.apple.com"
  /// APNs' development server, for devices whose Wallet is signed for development.
  public static let developmentBase = "https://api.sandbox.push.apple.com"

  /// The APNs authentication key: the PEM text (PKCS#8, P-256) of the `.p8` file Apple gave
  /// (Certificates, Identifiers & Profiles, Keys).
  public var keyPEM: String
  /// The key's 10-character id (the provider token's `kid`).
  public var keyId: String
  /// The 10-character team id the key belongs to (the provider token's `iss`).
  public var teamId: String
  /// Where pushes go: `productionBase`, `developmentBase`, or a test server's URL; no trailing path.
  public var apiBase: String
  /// The CA certificates APNs' certificate must chain to.
  public var trustRoots: RemoteConnectionSettings.TrustRoots
  public var connectTimeoutSeconds: Double = 5
  /// From sending a push to the last byte of its answer.
  public var requestTimeoutSeconds: Double = 10

  public init(
    keyPEM: String, keyId: String, teamId: String, apiBase: String = Self.productionBase,
    trustRoots: RemoteConnectionSettings.TrustRoots = .system
  ) {
    self.keyPEM = keyPEM
    self.keyId = keyId
    self.teamId = teamId
    self.apiBase = apiBase
    self.trustRoots = trustRoots
  }

  /// The ids and the server; never the key.
  public var description: String {
    "APNs at \(apiBase), key id \(keyId), team id \(teamId)"
  }

  public var debugDescription: String { description }

  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "keyId": keyId, "teamId": teamId, "apiBase": apiBase, "trustRoots": trustRoots,
        "connectTimeoutSeconds": connectTimeoutSeconds, "requestTimeoutSeconds": requestTimeoutSeconds,
      ])
  }
}

/// Why an APNs client could not be made from its settings. The messages name the setting at fault
/// and never quote the key.
public enum APNsSetupError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The key text is not a PEM `PRIVATE KEY` (PKCS#8) block.
  case keyNotPKCS8
  /// A PKCS#8 key, but not a P-256 (ES256) one.
  case keyNotP256
  /// `keyId` or `teamId` is empty or holds something else than letters and digits.
  case invalidIdentifier(String)
  /// `apiBase` is not an https URL with a host and no path.
  case invalidAPIBase
  /// The trust roots hold no certificate that reads.
  case invalidTrustRoots

  public var description: String {
    switch self {
    case .keyNotPKCS8:
      return """
        the APNs key is not a PEM PKCS#8 private key ("-----BEGIN PRIVATE KEY-----"): use the .p8 file Apple gave \
        for the APNs authentication key, unchanged
        """
    case .keyNotP256:
      return "the APNs key is not a P-256 (ES256) private key: use the .p8 file of an APNs authentication key"
    case .invalidIdentifier(let name):
      return "the APNs \(name) is not the 10-character id Apple shows (letters and digits)"
    case .invalidAPIBase:
      return "the APNs server is not an https URL with a host and no path (such as \(APNsSettings.productionBase))"
    case .invalidTrustRoots:
      return "the APNs trust roots hold no PEM certificate that reads"
    }
  }
}
