package secret

import (
	"errors"

	"github.com/zalando/go-keyring"
)

// system is the system's credential store through go-keyring.
type system struct{}

// System is the system's credential store.
func System() Keyring { return system{} }

func (system) Get(service, user string) (string, error) {
	v, err := keyring.Get(service, user)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", ErrNotFound
	}
	return v, err
}

func (system) Set(service, user, value string) error { return keyring.Set(service, user, value) }

func (system) Delete(service, user string) error {
	err := keyring.Delete(service, user)
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	return err
}
