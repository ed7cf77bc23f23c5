package secret

const storeName = "the login Keychain"
