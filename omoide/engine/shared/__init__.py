"""What every service uses: embedding, job signals, events, input checks, knowledge settings."""
