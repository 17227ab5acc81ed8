import PayServiceCore

/// Takes Stripe keys out of what Stripe sent before payservice reads it (`Redactor`): the
/// configured key wherever it appears, and anything shaped like a key (`sk_live_…`, `sk_test_…`,
/// `rk_live_…`, `rk_test_…`, `pk_live_…`, `pk_test_…`, `whsec_…`, masked ones like
/// `sk_test_****1234` included). Each becomes `[a key]`.
typealias KeyScrubber = Redactor

extension Redactor {
  /// - Parameter key: the configured secret key (may be empty: then only the shapes are scrubbed).
  init(key: String) {
    self.init(
      secrets: [key], prefixes: ["sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "whsec_"],
      replacement: "[a key]")
  }
}
