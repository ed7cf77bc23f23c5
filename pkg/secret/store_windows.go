package secret

const storeName = "the Windows Credential Manager"
