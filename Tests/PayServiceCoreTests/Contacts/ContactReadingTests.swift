@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Contact reading")
struct ContactReadingTests {
  @Test("all twelve members are read into their fields; the last of a repeated member wins")
  func allMembers() throws {
    let json = try JSONParser.parse(
      #"{"givenName":"A","familyName":"B","emailAddress":"C","phoneNumber":"D","subLocality":"E","locality":"F","subAdministrativeArea":"G","administrativeArea":"H","postalCode":"I","country":"J","countryCode":"K","addressLines":["L","M"],"locality":"F2","extra":1}"#
    )
    let reader = ParamReader()
    let contact = try #require(Contact.read(json, at: { "c" }, reader: reader))
    #expect(reader.errors.isEmpty)
    #expect(
      [contact.givenName, contact.familyName, contact.emailAddress, contact.phoneNumber, contact.subLocality,
       contact.locality, contact.subAdministrativeArea, contact.administrativeArea, contact.postalCode,
       contact.country, contact.countryCode] == ["A", "B", "C", "D", "E", "F2", "G", "H", "I", "J", "K"])
    #expect(contact.addressLines == ["L", "M"])
  }

  @Test("problems are reported in field order (the order contacts are written in) with their paths")
  func problemsInOrder() throws {
    let json = try JSONParser.parse(#"{"countryCode":1,"addressLines":"x","givenName":true}"#)
    let reader = ParamReader()
    #expect(Contact.read(json, at: { "shippingContact" }, reader: reader) == nil)
    #expect(
      reader.errors.map(\.path) == [
        "shippingContact.givenName", "shippingContact.addressLines", "shippingContact.countryCode",
      ])
  }
}
