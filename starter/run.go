package main

import (
	"context"
	"errors"
)

func runCommand(ctx context.Context, args []string) error { return errors.New("not yet") }
