import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { DatabaseModule } from '@app/persistence';
import { AdminBearerStrategy, PortalBearerStrategy, WebhookBearerStrategy } from './bearer.strategies';

@Module({
  imports: [PassportModule.register({ session: false }), DatabaseModule],
  providers: [WebhookBearerStrategy, AdminBearerStrategy, PortalBearerStrategy],
})
export class AuthModule {}
