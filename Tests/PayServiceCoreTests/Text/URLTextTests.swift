import Testing

@testable import PayServiceCore

/// URLs quoted in messages lose their user info, however the password is written.
@Suite("URL text")
struct URLTextTests {
  @Test("the user info goes up to the last '@', whatever the password holds; text without one is unchanged")
  func withoutUserInfo() {
    let cases = [
      ("https://user:pa/ss@api.example.com/v1", "https://***@api.example.com/v1"),
      ("https://user:pa?ss#x@api.example.com", "https://***@api.example.com"),
      ("https://user:p@ss@api.example.com:8443", "https://***@api.example.com:8443"),
      ("https://:pass@host", "https://***@host"),
      ("user:pass@host", "***@host"),
      ("postgres://app:se%zz:cr3t@db/orders", "postgres://***@db/orders"),
      ("https://api.stripe.com", "https://api.stripe.com"),
      ("payservice.sqlite", "payservice.sqlite"),
      ("", ""),
    ]
    for (text, expected) in cases {
      #expect(URLText.withoutUserInfo(text) == expected, "\(text)")
    }
  }
}
