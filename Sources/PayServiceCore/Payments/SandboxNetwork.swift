/// The built-in card network behind a decrypted Apple Pay payment: it places an authorization hold
/// at once (the first of the two phases), which processOrder captures (the settlement phase).
///
/// Deterministic: it declines an account number that fails the Luhn check and a card whose
/// expiration date is before the service clock's day, and approves everything else.
enum SandboxNetwork {
  /// nil when the hold is placed; else why the network declined it (no card data in the message).
  static func declineReason(_ payment: DecryptedPayment, now: Int64) -> String? {
    if !passesLuhn(payment.accountNumber) { return "the account number is not valid" }
    let expiration = payment.expiration
    let lastDay = Int64(RFC3339.daysFromCivil(expiration.year, expiration.month, expiration.day))
    if RFC3339.floorDiv(now, 86_400) > lastDay { return "the card has expired" }
    return nil
  }

  /// The Luhn (mod 10) check digit test.
  static func passesLuhn(_ digits: String) -> Bool {
    var sum = 0
    for (index, byte) in digits.utf8.reversed().enumerated() {
      var digit = Int(byte) - 0x30
      guard (0...9).contains(digit) else { return false }
      if index % 2 == 1 {
        digit *= 2
        if digit > 9 { digit -= 9 }
      }
      sum += digit
    }
    return sum % 10 == 0
  }
}
