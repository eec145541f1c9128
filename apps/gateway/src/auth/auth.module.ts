import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { AdminBearerStrategy, WebhookBearerStrategy } from './bearer.strategies';

@Module({
  imports: [PassportModule.register({ session: false })],
  providers: [WebhookBearerStrategy, AdminBearerStrategy],
})
export class AuthModule {}
